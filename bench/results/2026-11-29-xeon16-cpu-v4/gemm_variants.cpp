// Microbenchmark: the CPU forward's GEMMs (S^T = K Q^T and O^T += V^T P^T at forward tile shapes)
// with the library's kernel and with variants: other register tiles, B panels packed contiguous.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "cpu/tiling.h"
#ifdef USE512
#include "cpu/simd_avx512.h"
#else
#include "cpu/simd_avx2.h"
#endif
#include "cpu/gemm_body.h"
using namespace flashvision::detail::cpu;
using namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS;
constexpr int W = Vec::kWidth;

// Generic tile R x V over a B panel with row stride ldb (packed: ldb = V*W).
template <int R, int V, bool CK>
inline void tile(const GemmArgs& g, const float* b, int64_t ldb, int64_t m0, int64_t n0) {
  Vec acc[R][V];
  float* c = g.c + m0 * g.ldc + n0;
  for (int r = 0; r < R; ++r) for (int v = 0; v < V; ++v) acc[r][v] = g.accumulate ? load(c + r * g.ldc + v * W) : zero();
  if constexpr (CK) {
    const float* a[R];
    for (int r = 0; r < R; ++r) a[r] = g.a + (m0 + r) * g.a_row_stride;
    for (int64_t p = 0; p < g.k; ++p, b += ldb) {
      Vec bv[V];
      for (int v = 0; v < V; ++v) bv[v] = load(b + v * W);
      for (int r = 0; r < R; ++r) { const Vec ar = broadcast(a[r][p]); for (int v = 0; v < V; ++v) acc[r][v] = fma(ar, bv[v], acc[r][v]); }
    }
  } else {
    const float* a = g.a + m0;
    for (int64_t p = 0; p < g.k; ++p, b += ldb, a += g.a_col_stride) {
      Vec bv[V];
      for (int v = 0; v < V; ++v) bv[v] = load(b + v * W);
      for (int r = 0; r < R; ++r) { const Vec ar = broadcast(a[r]); for (int v = 0; v < V; ++v) acc[r][v] = fma(ar, bv[v], acc[r][v]); }
    }
  }
  for (int r = 0; r < R; ++r) for (int v = 0; v < V; ++v) store(c + r * g.ldc + v * W, acc[r][v]);
}
template <int R, int V, bool CK, bool PACK>
void gemm_v(const GemmArgs& g, float* pack) {
  for (int64_t n0 = 0; n0 + V * W <= g.n; n0 += V * W) {
    const float* b = g.b + n0; int64_t ldb = g.ldb;
    if (PACK) {
      for (int64_t p = 0; p < g.k; ++p) std::memcpy(pack + p * V * W, g.b + p * g.ldb + n0, V * W * 4);
      b = pack; ldb = V * W;
    }
    int64_t m0 = 0;
    for (; m0 + R <= g.m; m0 += R) tile<R, V, CK>(g, b, ldb, m0, n0);
  }
}
template <int R, int V> double covered(const GemmArgs& g) {
  return 2.0 * (g.m / R * R) * (g.n / (V * W) * V * W) * g.k;
}
template <class F> double run(F f, double flops, int reps) {
  f(); auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return flops * reps / s * 1e-9;
}
int main(int argc, char** argv) {
  int d = atoi(argv[1]), bq = atoi(argv[2]), bk = atoi(argv[3]);
  Tiling t{bq, bk};
  int64_t ld = t.lane_pitch(), pitch = tile_pitch(d);
  std::vector<float> q(d * ld), o(d * ld), s(t.max_keys() * ld), k(t.max_keys() * pitch), v(t.max_keys() * pitch), pk(4096 * 64);
  for (auto* vec : {&q, &o, &s, &k, &v}) for (auto& x : *vec) x = (rand() % 1000) * 1e-3f - 0.5f;
  GemmArgs sg{bk, bq, d, k.data(), pitch, 1, q.data(), ld, s.data(), ld, false};
  GemmArgs og{d, bq, bk, v.data(), 1, pitch, s.data(), ld, o.data(), ld, true};
  int reps = 1000000000LL / (2LL * bk * bq * d) + 1;
  float* P = pk.data();
  printf("d %d bq %d bk %d ld %ld pitch %ld (GF/s S | O)\n", d, bq, bk, (long)ld, (long)pitch);
  printf("  lib        %6.1f | %6.1f\n", run([&] { gemm(sg); }, 2.0*sg.m*sg.n*sg.k, reps), run([&] { gemm(og); }, 2.0*og.m*og.n*og.k, reps));
  printf("  8x3        %6.1f | %6.1f\n", run([&] { gemm_v<8, 3, true, false>(sg, P); }, covered<8, 3>(sg), reps), run([&] { gemm_v<8, 3, false, false>(og, P); }, covered<8, 3>(og), reps));
  printf("  8x3 pack   %6.1f | %6.1f\n", run([&] { gemm_v<8, 3, true, true>(sg, P); }, covered<8, 3>(sg), reps), run([&] { gemm_v<8, 3, false, true>(og, P); }, covered<8, 3>(og), reps));
#ifdef USE512
  printf("  6x4        %6.1f | %6.1f\n", run([&] { gemm_v<6, 4, true, false>(sg, P); }, covered<6, 4>(sg), reps), run([&] { gemm_v<6, 4, false, false>(og, P); }, covered<6, 4>(og), reps));
  printf("  6x4 pack   %6.1f | %6.1f\n", run([&] { gemm_v<6, 4, true, true>(sg, P); }, covered<6, 4>(sg), reps), run([&] { gemm_v<6, 4, false, true>(og, P); }, covered<6, 4>(og), reps));
  printf("  12x2       %6.1f | %6.1f\n", run([&] { gemm_v<12, 2, true, false>(sg, P); }, covered<12, 2>(sg), reps), run([&] { gemm_v<12, 2, false, false>(og, P); }, covered<12, 2>(og), reps));
  printf("  14x2 pack  %6.1f | %6.1f\n", run([&] { gemm_v<14, 2, true, true>(sg, P); }, covered<14, 2>(sg), reps), run([&] { gemm_v<14, 2, false, true>(og, P); }, covered<14, 2>(og), reps));
  printf("  4x6 pack   %6.1f | %6.1f\n", run([&] { gemm_v<4, 6, true, true>(sg, P); }, covered<4, 6>(sg), reps), run([&] { gemm_v<4, 6, false, true>(og, P); }, covered<4, 6>(og), reps));
#else
  printf("  4x3 pack   %6.1f | %6.1f\n", run([&] { gemm_v<4, 3, true, true>(sg, P); }, covered<4, 3>(sg), reps), run([&] { gemm_v<4, 3, false, true>(og, P); }, covered<4, 3>(og), reps));
#endif
}
