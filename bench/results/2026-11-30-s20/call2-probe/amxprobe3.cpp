// Scratch probe (session 20): the AMX forward's two tile loops at vae-mid-512's sizes (head dim
// 512, 32 query rows a group, 256-key blocks packed as in amx_kernels.h), with the K/V block in L2
// as in the library, against variants: B tiles prefetched into L1 some steps ahead, no C
// stores, B from L1. Random bf16 data. GFLOP/s per thread on 1 thread and on all threads.
#include <immintrin.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

struct alignas(64) Cfg {
  uint8_t palette = 1, start = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static Cfg g_cfg;
static void configure() {
  for (int t = 0; t < 8; ++t) { g_cfg.bytes_per_row[t] = 64; g_cfg.rows[t] = 16; }
  _tile_loadconfig(&g_cfg);
}
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int64_t kDp = 512, kRows = 32, kKeys = 256, kDTiles = kDp / 16;
constexpr int64_t kKeyTileWords = kDp / 2 * 16;  // one 16-key K^T tile: [dp/2][16] dwords
constexpr int64_t kChunkWords = kDTiles * 256;   // one 32-key V chunk

struct Buffers {
  std::vector<uint16_t> q, p;
  std::vector<uint32_t> k, v;
  std::vector<float> s, o;
  Buffers() : q(kRows * kDp), p(kRows * kKeys), k(kKeys / 16 * kKeyTileWords), v(kKeys / 32 * kChunkWords),
              s(kRows * kKeys), o(kRows * kDp) {}
  void fill(unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto bf = [&] { float f = u(g); uint32_t b; std::memcpy(&b, &f, 4); return uint16_t(b >> 16); };
    for (auto& x : q) x = bf();
    for (auto& x : p) x = bf();
    for (auto& x : k) x = bf() | uint32_t(bf()) << 16;
    for (auto& x : v) x = bf() | uint32_t(bf()) << 16;
    for (auto& x : s) x = 0.f;
    for (auto& x : o) x = u(g);
  }
};

static inline void prefetch_tile(const void* t) {
  const char* c = static_cast<const char*>(t);
  for (int l = 0; l < 16; ++l) _mm_prefetch(c + 64 * l, _MM_HINT_T0);
}

// S = Q K^T as the library: per key pair, zero C, dp/32 steps, store C.
// kPf: prefetch the B tiles this many steps ahead (0: none). kStore: store C. kPair0: every key
// pair reads pair 0's tiles (B from L1).
template <int kPf, bool kStore, bool kPair0>
static void scores(Buffers& b) {
  constexpr int64_t steps = kDp / 32;
  for (int64_t j = 0; j < kKeys / 16; j += 2) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    const uint32_t* k0 = b.k.data() + (kPair0 ? 0 : j) * kKeyTileWords;
    const uint32_t* k1 = k0 + kKeyTileWords;
    for (int64_t st = 0; st < steps; ++st) {
      if constexpr (kPf > 0) {
        // the step kPf ahead, running into the next key pair's first steps
        const int64_t ahead = st + kPf;
        const uint32_t* n0 = ahead < steps ? k0 + ahead * 256 : k0 + 2 * kKeyTileWords + (ahead - steps) * 256;
        if (j + 2 < kKeys / 16 || ahead < steps) { prefetch_tile(n0); prefetch_tile(n0 + kKeyTileWords); }
      }
      _tile_loadd(4, b.q.data() + 32 * st, kDp * 2);
      _tile_loadd(5, b.q.data() + 16 * kDp + 32 * st, kDp * 2);
      _tile_loadd(6, k0 + st * 256, 64);
      _tile_loadd(7, k1 + st * 256, 64);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    if constexpr (kStore) {
      float* s = b.s.data() + 16 * j;
      _tile_stored(0, s, kKeys * 4); _tile_stored(1, s + 16, kKeys * 4);
      _tile_stored(2, s + 16 * kKeys, kKeys * 4); _tile_stored(3, s + 16 * kKeys + 16, kKeys * 4);
    }
  }
  if constexpr (!kStore) _tile_stored(0, b.s.data(), 64);
}

// O += P V as the library: per head-dim tile pair, load C, the block's chunks, store C.
template <int kPf, bool kStore, bool kPair0>
static void values(Buffers& b) {
  constexpr int64_t chunks = kKeys / 32;
  for (int64_t t = 0; t < kDTiles; t += 2) {
    float* o = b.o.data() + 16 * t;
    if constexpr (kStore) {
      _tile_loadd(0, o, kDp * 4); _tile_loadd(1, o + 16, kDp * 4);
      _tile_loadd(2, o + 16 * kDp, kDp * 4); _tile_loadd(3, o + 16 * kDp + 16, kDp * 4);
    }
    for (int64_t c = 0; c < chunks; ++c) {
      const uint32_t* v0 = b.v.data() + (c * kDTiles + (kPair0 ? 0 : t)) * 256;
      if constexpr (kPf > 0) {
        const int64_t ahead = c + kPf;
        const uint32_t* n0 = ahead < chunks ? v0 + kPf * kChunkWords
                                            : b.v.data() + ((ahead - chunks) * kDTiles + t + 2) * 256;
        if (t + 2 < kDTiles || ahead < chunks) { prefetch_tile(n0); prefetch_tile(n0 + 256); }
      }
      _tile_loadd(4, b.p.data() + 32 * c, kKeys * 2);
      _tile_loadd(5, b.p.data() + 16 * kKeys + 32 * c, kKeys * 2);
      _tile_loadd(6, v0, 64);
      _tile_loadd(7, v0 + 256, 64);
      _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    if constexpr (kStore) {
      _tile_stored(0, o, kDp * 4); _tile_stored(1, o + 16, kDp * 4);
      _tile_stored(2, o + 16 * kDp, kDp * 4); _tile_stored(3, o + 16 * kDp + 16, kDp * 4);
    }
  }
  if constexpr (!kStore) _tile_stored(0, b.o.data(), 64);
}

template <void (*Fn)(Buffers&)>
static void report(const char* name, int threads) {
  constexpr int reps = 300;
  double gf = 0;
#pragma omp parallel num_threads(threads) reduction(+ : gf)
  {
    configure();
    Buffers b;
    b.fill(99u + omp_get_thread_num());
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int r = 0; r < 20; ++r) Fn(b);
    const double t0 = now();
    for (int r = 0; r < reps; ++r) Fn(b);
    gf += 2.0 * kRows * kKeys * kDp * reps / (now() - t0) / 1e9;
    _tile_release();
  }
  printf("threads %2d  %-36s %6.0f GFLOP/s/thread\n", threads, name, gf / threads);
}

int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) { printf("no AMX permission\n"); return 1; }
  for (int rep = 0; rep < 2; ++rep) {
    for (int threads : {1, omp_get_max_threads()}) {
      report<scores<0, true, false>>("scores (library)", threads);
      report<scores<1, true, false>>("scores, prefetch 1 step", threads);
      report<scores<2, true, false>>("scores, prefetch 2 steps", threads);
      report<scores<4, true, false>>("scores, prefetch 4 steps", threads);
      report<scores<8, true, false>>("scores, prefetch 8 steps", threads);
      report<scores<0, false, false>>("scores, no C stores", threads);
      report<scores<0, true, true>>("scores, K from L1", threads);
      report<scores<0, false, true>>("scores, K from L1, no C stores", threads);
      report<values<0, true, false>>("values (library)", threads);
      report<values<1, true, false>>("values, prefetch 1 chunk", threads);
      report<values<2, true, false>>("values, prefetch 2 chunks", threads);
      report<values<4, true, false>>("values, prefetch 4 chunks", threads);
      report<values<0, false, false>>("values, no O load/store", threads);
      report<values<0, true, true>>("values, V from L1", threads);
      report<values<0, false, true>>("values, V from L1, no O load/store", threads);
    }
  }
}
