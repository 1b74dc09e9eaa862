// Scratch probe (session 20): does the row stride of the A operand's tile loads set the AMX rate?
// 2 x 2 tile steps (two A tiles, two B tiles, four dots), 8 steps a pass, operands in L1 (16 KiB
// of A, 16 KiB of B), no C stores; A read with row strides of 64 bytes (each tile contiguous, as
// amxprobe2's fast case), 512 and 1024 bytes (row-major Q or P as the library keeps them) and
// 576 / 1088 (padded). Variants interleaved, 5 rounds, 1 thread and all threads.
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


// A: 32 rows; row r, step s at a + r * stride_el + 32 s (row-major), or tile-contiguous when
// stride_bytes == 64: tile (i, s) at a + (s * 2 + i) * 512, row r of it at + 32 r.
template <int kStrideBytes>
static void pass(const uint16_t* a, const uint32_t* b, int64_t steps) {
  for (int64_t s = 0; s < steps; ++s) {
    if constexpr (kStrideBytes == 64) {
      _tile_loadd(4, a + (s * 2) * 512, 64);
      _tile_loadd(5, a + (s * 2 + 1) * 512, 64);
    } else {
      constexpr int64_t el = kStrideBytes / 2;
      _tile_loadd(4, a + 32 * s, kStrideBytes);
      _tile_loadd(5, a + 16 * el + 32 * s, kStrideBytes);
    }
    _tile_loadd(6, b + s * 512, 64);
    _tile_loadd(7, b + s * 512 + 256, 64);
    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
  }
}

template <int kStrideBytes>
static double rate(const uint16_t* a, const uint32_t* b) {
  constexpr int64_t steps = 8, passes = 20000;
  for (int i = 0; i < 200; ++i) pass<kStrideBytes>(a, b, steps);
  const double t0 = now();
  for (int64_t i = 0; i < passes; ++i) pass<kStrideBytes>(a, b, steps);
  return 4.0 * 16 * 16 * 32 * 2 * steps * passes / (now() - t0) / 1e9;
}

int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) { printf("no AMX permission\n"); return 1; }
  constexpr int kVariants = 5;
  const int strides[kVariants] = {64, 512, 576, 1024, 1088};
  for (int round = 0; round < 5; ++round) {
    for (int threads : {1, omp_get_max_threads()}) {
      double g[kVariants] = {};
#pragma omp parallel num_threads(threads)
      {
        configure();
        std::vector<uint16_t> a(32 * 1088);  // enough for 32 rows at the widest stride
        std::vector<uint32_t> b(8 * 512);
        std::mt19937 gen(7 + omp_get_thread_num());
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        auto bf = [&] { float f = u(gen); uint32_t x; std::memcpy(&x, &f, 4); return uint16_t(x >> 16); };
        for (auto& x : a) x = bf();
        for (auto& x : b) x = bf() | uint32_t(bf()) << 16;
        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
        double mine[kVariants] = {rate<64>(a.data(), b.data()), rate<512>(a.data(), b.data()),
                                  rate<576>(a.data(), b.data()), rate<1024>(a.data(), b.data()),
                                  rate<1088>(a.data(), b.data())};
        _tile_release();
#pragma omp critical
        for (int v = 0; v < kVariants; ++v) g[v] += mine[v];
      }
      printf("round %d threads %2d GFLOP/s/thread by A row stride:", round, threads);
      for (int v = 0; v < kVariants; ++v) printf("  %d B: %5.0f", strides[v], g[v] / threads);
      printf("\n");
    }
  }
}
