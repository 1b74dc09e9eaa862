// Register-blocked fp32 GEMM, C (+)= A * B: the one matrix product all passes use.
//
// Written once for every ISA: a kernels_*.cpp includes its simd_*.h (which names the namespace
// and provides Vec, kGemmRows, kGemmVecs) and then this header. The micro-tile keeps a
// kGemmRows x (kGemmVecs * width) block of C in registers; each step over k loads kGemmVecs
// vectors of one B row and broadcasts one A element per tile row.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include a cpu/simd_*.h header first"
#endif

#include <cstdint>

#include "cpu/kernels.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

// Every loop over the register tile's rows and vectors is unrolled by name. GCC 12 at
// -O3 otherwise kept the tile's accumulators in a stack array around the k loop (24 zmm stored and
// reloaded at both ends of every tile, ~150 memory operations per AVX-512 tile of 3072 FMAs).
#define FLASHVISION_GEMM_UNROLL _Pragma("GCC unroll 32")

/// One kRows x (kVecs * Vec::kWidth) tile of C at (m0, n0). kContiguousK: A's rows are contiguous
/// (a_col_stride == 1); otherwise its columns are (a_row_stride == 1).
template <int kRows, int kVecs, bool kContiguousK>
void gemm_tile(const GemmArgs& g, int64_t m0, int64_t n0) {
  constexpr int kW = Vec::kWidth;
  Vec acc[kRows][kVecs];
  float* c = g.c + m0 * g.ldc + n0;
  if (g.accumulate) {
    FLASHVISION_GEMM_UNROLL
    for (int r = 0; r < kRows; ++r) {
      FLASHVISION_GEMM_UNROLL
      for (int v = 0; v < kVecs; ++v) acc[r][v] = load(c + r * g.ldc + v * kW);
    }
  } else {
    FLASHVISION_GEMM_UNROLL
    for (int r = 0; r < kRows; ++r) {
      FLASHVISION_GEMM_UNROLL
      for (int v = 0; v < kVecs; ++v) acc[r][v] = zero();
    }
  }
  const float* b = g.b + n0;
  if constexpr (kContiguousK) {
    const float* a[kRows];
    FLASHVISION_GEMM_UNROLL
    for (int r = 0; r < kRows; ++r) a[r] = g.a + (m0 + r) * g.a_row_stride;
    for (int64_t p = 0; p < g.k; ++p, b += g.ldb) {
      Vec bv[kVecs];
      FLASHVISION_GEMM_UNROLL
      for (int v = 0; v < kVecs; ++v) bv[v] = load(b + v * kW);
      FLASHVISION_GEMM_UNROLL
      for (int r = 0; r < kRows; ++r) {
        const Vec ar = broadcast(a[r][p]);
        FLASHVISION_GEMM_UNROLL
        for (int v = 0; v < kVecs; ++v) acc[r][v] = fma(ar, bv[v], acc[r][v]);
      }
    }
  } else {
    const float* a = g.a + m0;
    for (int64_t p = 0; p < g.k; ++p, b += g.ldb, a += g.a_col_stride) {
      Vec bv[kVecs];
      FLASHVISION_GEMM_UNROLL
      for (int v = 0; v < kVecs; ++v) bv[v] = load(b + v * kW);
      FLASHVISION_GEMM_UNROLL
      for (int r = 0; r < kRows; ++r) {
        const Vec ar = broadcast(a[r]);
        FLASHVISION_GEMM_UNROLL
        for (int v = 0; v < kVecs; ++v) acc[r][v] = fma(ar, bv[v], acc[r][v]);
      }
    }
  }
  FLASHVISION_GEMM_UNROLL
  for (int r = 0; r < kRows; ++r) {
    FLASHVISION_GEMM_UNROLL
    for (int v = 0; v < kVecs; ++v) store(c + r * g.ldc + v * kW, acc[r][v]);
  }
  if (g.col_max == nullptr) return;
  FLASHVISION_GEMM_UNROLL
  for (int v = 0; v < kVecs; ++v) {
    float* col_max = g.col_max + n0 + v * kW;
    Vec m = load(col_max);
    // Stored C second: maxps passes its second operand's NaN on, as the softmax's own max does.
    FLASHVISION_GEMM_UNROLL
    for (int r = 0; r < kRows; ++r) m = max(m, acc[r][v]);
    store(col_max, m);
  }
}

#undef FLASHVISION_GEMM_UNROLL

/// Rows of the register tile for a panel of kVecs vectors: the accumulator budget of the full tile
/// (kGemmRows x kGemmVecs) spread over fewer, longer rows for narrow panels.
template <int kVecs>
inline constexpr int kRowsFor = kGemmRows* kGemmVecs / kVecs;

/// Runs the tile with `rows` (1..kRows) rows: the last row block of C may be partial.
template <int kVecs, bool kContiguousK, int kRows = kRowsFor<kVecs>>
void gemm_tile_rows(int64_t rows, const GemmArgs& g, int64_t m0, int64_t n0) {
  if constexpr (kRows > 1) {
    if (rows < kRows) return gemm_tile_rows<kVecs, kContiguousK, kRows - 1>(rows, g, m0, n0);
  }
  gemm_tile<kRows, kVecs, kContiguousK>(g, m0, n0);
}

/// One column panel of kVecs vectors: B's panel (k x panel width) stays in L1 while every row
/// block of A streams past it.
template <int kVecs, bool kContiguousK>
void gemm_panel(const GemmArgs& g, int64_t n0) {
  constexpr int64_t kRows = kRowsFor<kVecs>;
  for (int64_t m0 = 0; m0 < g.m; m0 += kRows) {
    gemm_tile_rows<kVecs, kContiguousK>(g.m - m0 < kRows ? g.m - m0 : kRows, g, m0, n0);
  }
}

/// How many wide panels (kGemmVecs vectors each) a row of `vecs` vectors starts with: all when
/// they divide it; else, from 4 on, all that leave 2-vector panels for the rest (ViT-H's 272
/// lanes are 5 x 48 + 32 on AVX-512: its forward ran ~8% faster on a Xeon than with 8 x 32 +
/// 16); else none (n = 64 is 4 x 16 floats rather than 24 + 24 + 16 on AVX2, faster on Zen 3).
constexpr int64_t wide_panels(int64_t vecs) {
  const int64_t wide = vecs / kGemmVecs;
  const int64_t left = vecs % kGemmVecs;
  if (left == 0) return wide;
  if (wide < 4) return 0;
  // A lone vector left over joins the last wide panel as two 2-vector panels.
  return left == 1 && kGemmVecs > 2 ? wide - 1 : wide;
}

/// Splits the columns into panels: wide_panels of kGemmVecs vectors, then two vectors wide, then
/// one.
template <bool kContiguousK>
void gemm_panels(const GemmArgs& g) {
  constexpr int64_t kW = Vec::kWidth;
  constexpr int64_t kWide = kGemmVecs * kW;
  const int64_t wide_end = wide_panels(g.n / kW) * kWide;
  int64_t n0 = 0;
  for (; n0 < wide_end; n0 += kWide) gemm_panel<kGemmVecs, kContiguousK>(g, n0);
  if constexpr (kGemmVecs > 2) {
    for (; n0 + 2 * kW <= g.n; n0 += 2 * kW) gemm_panel<2, kContiguousK>(g, n0);
  }
  for (; n0 < g.n; n0 += kW) gemm_panel<1, kContiguousK>(g, n0);
}

/// C (+)= A * B for the table (see GemmArgs).
inline void gemm(const GemmArgs& g) {
  if (g.a_col_stride == 1) {
    gemm_panels<true>(g);
  } else {
    gemm_panels<false>(g);
  }
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
