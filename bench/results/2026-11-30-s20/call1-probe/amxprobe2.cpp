// Scratch probe (session 20): where the AMX tile loops of the CPU forward lose their rate on the
// Xeon of the device machine. Random bf16 operands (never zeros), operands in L1; each variant's
// time per iteration and GFLOP/s per thread, on 1 thread and on all threads.
#include <immintrin.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

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

// Operands: 16 tiles of random bf16 (16 KiB) per thread; C: 4 tiles.
struct Data {
  alignas(64) uint16_t a[16 * 512];
  alignas(64) float c[4 * 256];
  void fill(unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (auto& x : a) { float f = u(g); uint32_t b; std::memcpy(&b, &f, 4); x = uint16_t(b >> 16); }
    for (auto& x : c) x = 0.f;
  }
  const uint16_t* t(int i) const { return a + (i & 15) * 512; }
};

#define LD(r, p) _tile_loadd(r, p, 64)
#define DOT(c, x, y) _tile_dpbf16ps(c, x, y)

// Each variant: one iteration's body; `dots` = TDPBF16PS per iteration.
template <int V>
static void body(const Data& d, int64_t i) {
  const int s = int(i & 3) * 4;
  if constexpr (V == 0) {  // resident operands (random data loaded once)
    DOT(0, 4, 6); DOT(1, 4, 7); DOT(2, 5, 6); DOT(3, 5, 7);
  } else if constexpr (V == 1) {  // 2x2, all four operands loaded, then the dots
    LD(4, d.t(s)); LD(5, d.t(s + 1)); LD(6, d.t(s + 2)); LD(7, d.t(s + 3));
    DOT(0, 4, 6); DOT(1, 4, 7); DOT(2, 5, 6); DOT(3, 5, 7);
  } else if constexpr (V == 2) {  // 2x2, A resident, B loaded
    LD(6, d.t(s + 2)); LD(7, d.t(s + 3));
    DOT(0, 4, 6); DOT(1, 4, 7); DOT(2, 5, 6); DOT(3, 5, 7);
  } else if constexpr (V == 3) {  // loads into tiles no dot reads (structural interference)
    LD(6, d.t(s + 2)); LD(7, d.t(s + 3));
    DOT(0, 4, 5); DOT(1, 5, 4); DOT(2, 4, 5); DOT(3, 5, 4);
  } else if constexpr (V == 4) {  // 1x2, operands double-buffered over two iterations
    LD(2, d.t(s)); LD(4, d.t(s + 1)); LD(5, d.t(s + 2));
    DOT(0, 2, 4); DOT(1, 2, 5);
    LD(3, d.t(s + 3)); LD(6, d.t(s + 4)); LD(7, d.t(s + 5));
    DOT(0, 3, 6); DOT(1, 3, 7);
  } else if constexpr (V == 5) {  // one accumulator, resident operands: dot latency chain
    DOT(0, 4, 6);
  } else if constexpr (V == 6) {  // two accumulators, resident
    DOT(0, 4, 6); DOT(1, 4, 7);
  } else if constexpr (V == 7) {  // load then a dot that reads it, one accumulator (serial)
    LD(4, d.t(s)); DOT(0, 4, 6);
  } else if constexpr (V == 8) {  // load-only, 4 tiles
    LD(4, d.t(s)); LD(5, d.t(s + 1)); LD(6, d.t(s + 2)); LD(7, d.t(s + 3));
  } else if constexpr (V == 9) {  // 2x2 with loads issued right after each tile's last reader
    DOT(0, 4, 6); DOT(1, 4, 7); LD(4, d.t(s));
    DOT(2, 5, 6); LD(6, d.t(s + 2));
    DOT(3, 5, 7); LD(5, d.t(s + 1)); LD(7, d.t(s + 3));
  } else if constexpr (V == 10) {  // 2x2, A resident, B loaded with the T1 (no-L1-allocate) hint
    _tile_stream_loadd(6, d.t(s + 2), 64); _tile_stream_loadd(7, d.t(s + 3), 64);
    DOT(0, 4, 6); DOT(1, 4, 7); DOT(2, 5, 6); DOT(3, 5, 7);
  } else if constexpr (V == 11) {  // 2x2 loads, C stored and reloaded every 8 iterations
    LD(4, d.t(s)); LD(5, d.t(s + 1)); LD(6, d.t(s + 2)); LD(7, d.t(s + 3));
    DOT(0, 4, 6); DOT(1, 4, 7); DOT(2, 5, 6); DOT(3, 5, 7);
    if ((i & 7) == 7) {
      float* c = const_cast<float*>(d.c);
      _tile_stored(0, c, 64); _tile_stored(1, c + 256, 64); _tile_stored(2, c + 512, 64); _tile_stored(3, c + 768, 64);
      _tile_loadd(0, c, 64); _tile_loadd(1, c + 256, 64); _tile_loadd(2, c + 512, 64); _tile_loadd(3, c + 768, 64);
    }
  }
}
static constexpr int kDots[] = {4, 4, 4, 4, 4, 1, 2, 1, 0, 4, 4, 4};
static const char* kName[] = {"resident 2x2",        "2x2 load A,B then dots", "2x2 A resident, load B",
                              "loads to unread tiles", "1x2 double-buffered",   "1 acc resident (latency)",
                              "2 acc resident",        "load->dot serial 1 acc", "load-only 4 tiles",
                              "2x2 loads after last use", "2x2 A res, B T1 hint", "2x2 loads + C spill/8"};

template <int V>
static double run_variant(const Data& d, int64_t iters) {
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  LD(4, d.t(0)); LD(5, d.t(1)); LD(6, d.t(2)); LD(7, d.t(3));
  for (int64_t i = 0; i < 1000; ++i) body<V>(d, i);
  const double t0 = now();
  for (int64_t i = 0; i < iters; ++i) body<V>(d, i);
  _tile_stored(0, const_cast<float*>(d.c), 64);
  return now() - t0;
}

template <int V>
static void report(int threads) {
  const int64_t iters = 400000;
  double ns = 0;
#pragma omp parallel num_threads(threads) reduction(+ : ns)
  {
    configure();
    static thread_local Data d;
    d.fill(1234u + omp_get_thread_num());
    ns += run_variant<V>(d, iters) / iters * 1e9;
    _tile_release();
  }
  ns /= threads;
  const double gf = kDots[V] * 16.0 * 16 * 32 * 2 / ns;
  printf("threads %2d  %-28s %8.2f ns/iter  %7.0f GFLOP/s/thread\n", threads, kName[V], ns, gf);
}

template <int... V>
static void all(int threads, std::integer_sequence<int, V...>) { (report<V>(threads), ...); }

int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) { printf("no AMX permission\n"); return 1; }
  for (int rep = 0; rep < 2; ++rep)
    for (int threads : {1, omp_get_max_threads()}) all(threads, std::make_integer_sequence<int, 12>{});
}
