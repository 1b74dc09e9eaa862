// The AMX forward's steps (see amx_kernels.h), written once over a tile implementation `Tiles`
// (amx_tiles_native.h or amx_tiles_emulated.h) and the row functions of the including TU
// (amx_rows_avx512.h or amx_rows_portable.h, which name the namespace FLASHVISION_CPU_ISA_NS).
//
// Tile registers: 0-3 accumulate a 2 x 2 block of 16 x 16 fp32 outputs, 4-5 hold the A operands
// of its two row tiles and 6-7 the B operands of its two column tiles, so each pair of operand
// loads feeds two dot products (a 1 x 1 block would load two tiles per dot product and wait on
// the loads).
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include cpu/amx_rows_avx512.h or cpu/amx_rows_portable.h first"
#endif

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu/amx_kernels.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

/// C tiles 0..3 of a kRows x kCols block (1 or 2 each): zeroed, or loaded from c (row tile i,
/// column tile j at c + (16 i) ld + 16 j, ld in floats).
template <class Tiles, int kRows, int kCols>
void start_block(float* c, int64_t ld, bool load) {
  if (!load) {
    Tiles::template zero<0>();
    if constexpr (kCols > 1) Tiles::template zero<1>();
    if constexpr (kRows > 1) Tiles::template zero<2>();
    if constexpr (kRows > 1 && kCols > 1) Tiles::template zero<3>();
    return;
  }
  Tiles::template load<0>(c, ld * 4);
  if constexpr (kCols > 1) Tiles::template load<1>(c + 16, ld * 4);
  if constexpr (kRows > 1) Tiles::template load<2>(c + 16 * ld, ld * 4);
  if constexpr (kRows > 1 && kCols > 1) Tiles::template load<3>(c + 16 * ld + 16, ld * 4);
}

/// Stores C tiles 0..3 of a kRows x kCols block to c.
template <class Tiles, int kRows, int kCols>
void store_block(float* c, int64_t ld) {
  Tiles::template store<0>(c, ld * 4);
  if constexpr (kCols > 1) Tiles::template store<1>(c + 16, ld * 4);
  if constexpr (kRows > 1) Tiles::template store<2>(c + 16 * ld, ld * 4);
  if constexpr (kRows > 1 && kCols > 1) Tiles::template store<3>(c + 16 * ld + 16, ld * 4);
}

/// One step of a block: A tiles from a (row tile i at a + 16 i a_ld bf16, a_ld in elements), B
/// tiles b0 and b1 (16 rows of 64 bytes each), then the block's dot products.
template <class Tiles, int kRows, int kCols>
void dot_block(const uint16_t* a, int64_t a_ld, const uint32_t* b0, const uint32_t* b1) {
  Tiles::template load<4>(a, a_ld * 2);
  if constexpr (kRows > 1) Tiles::template load<5>(a + 16 * a_ld, a_ld * 2);
  Tiles::template load<6>(b0, 64);
  if constexpr (kCols > 1) Tiles::template load<7>(b1, 64);
  Tiles::template dot<0, 4, 6>();
  if constexpr (kCols > 1) Tiles::template dot<1, 4, 7>();
  if constexpr (kRows > 1) Tiles::template dot<2, 5, 6>();
  if constexpr (kRows > 1 && kCols > 1) Tiles::template dot<3, 5, 7>();
}

/// S tiles (i .. i + kRows) x (j .. j + kCols) = Q K^T over dp / 32 steps.
template <class Tiles, int kRows, int kCols>
void scores_block(const AmxScoresArgs& a, int64_t i, int64_t j) {
  start_block<Tiles, kRows, kCols>(nullptr, 0, false);
  const int64_t pairs = a.dp / 2;
  const uint32_t* k0 = a.k + j * pairs * 16;
  const uint32_t* k1 = k0 + pairs * 16;
  for (int64_t step = 0; step < a.dp / 32; ++step) {
    dot_block<Tiles, kRows, kCols>(a.q + 16 * i * a.dp + 32 * step, a.dp, k0 + step * 256,
                                   k1 + step * 256);
  }
  store_block<Tiles, kRows, kCols>(a.s + 16 * i * a.ld_s + 16 * j, a.ld_s);
}

/// O tiles (i .. i + kRows) x (t .. t + kCols) += P V over the block's key chunks.
template <class Tiles, int kRows, int kCols>
void values_block(const AmxValuesArgs& a, int64_t i, int64_t t) {
  float* o = a.o + 16 * i * a.ld_o + 16 * t;
  start_block<Tiles, kRows, kCols>(o, a.ld_o, a.accumulate);
  for (int64_t c = 0; c < a.key_chunks; ++c) {
    const uint32_t* v0 = a.v + (c * a.d_tiles + t) * 256;
    dot_block<Tiles, kRows, kCols>(a.p + 16 * i * a.ld_p + 32 * c, a.ld_p, v0, v0 + 256);
  }
  store_block<Tiles, kRows, kCols>(o, a.ld_o);
}

/// Calls block<kRows, kCols>(i, j) over a rows x cols grid of tiles in 2 x 2 steps, with 1-wide
/// blocks at odd edges.
template <template <int, int> class Block, class Args>
void over_grid(const Args& a, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; i += 2) {
    const bool two_rows = i + 1 < rows;
    for (int64_t j = 0; j < cols; j += 2) {
      const bool two_cols = j + 1 < cols;
      if (two_rows && two_cols) {
        Block<2, 2>::run(a, i, j);
      } else if (two_rows) {
        Block<2, 1>::run(a, i, j);
      } else if (two_cols) {
        Block<1, 2>::run(a, i, j);
      } else {
        Block<1, 1>::run(a, i, j);
      }
    }
  }
}

template <class Tiles>
struct Steps {
  template <int kRows, int kCols>
  struct Scores {
    static void run(const AmxScoresArgs& a, int64_t i, int64_t j) {
      scores_block<Tiles, kRows, kCols>(a, i, j);
    }
  };
  template <int kRows, int kCols>
  struct Values {
    static void run(const AmxValuesArgs& a, int64_t i, int64_t t) {
      values_block<Tiles, kRows, kCols>(a, i, t);
    }
  };

  static void scores(const AmxScoresArgs& a) { over_grid<Scores>(a, a.query_tiles, a.key_tiles); }
  static void values(const AmxValuesArgs& a) { over_grid<Values>(a, a.query_tiles, a.d_tiles); }
  static void begin_thread() { Tiles::configure(); }
  static void end_thread() { Tiles::release(); }
};

/// How far (log2 units) a score may pass the running max before the max moves to it (as in
/// softmax_body.h): P is then at most 2^8, exact enough in bf16, and O is rarely rescaled.
inline constexpr float kAmxMaxSlack = 8.0f;

/// See AmxSoftmaxArgs.
inline void softmax(const AmxSoftmaxArgs& a) {
  const float neg_inf = -__builtin_inff();
  for (int64_t r = 0; r < a.lanes; ++r) {
    uint16_t* p = a.p + r * a.ld_p;
    const int64_t n = r >= a.rows ? 0 : (a.visible != nullptr ? a.visible[r] : a.keys);
    const float m_old = r < a.rows ? a.row_max[r] : neg_inf;
    const float bound = m_old + kAmxMaxSlack;
    const float block_max = n > 0 ? scaled_max_past(a.s + r * a.ld_s, n, a.scale2, bound) : neg_inf;
    const float m_new = block_max > bound ? block_max : m_old;
    if (m_new == neg_inf) {  // no visible key so far (or a padding row): P = 0
      std::memset(p, 0, static_cast<size_t>(a.ld_p) * sizeof(uint16_t));
      continue;
    }
    float alpha = 1.0f;
    if (m_new != m_old && m_old != neg_inf) {
      alpha = std::exp2(m_old - m_new);
      scale_row(a.o + r * a.ld_o, a.o_cols, alpha);
    }
    exp2_row_to_bf16(a.s + r * a.ld_s, n, a.ld_p, a.scale2, m_new, p, a.row_sum + r * kAmxSumLanes,
                     alpha);
    a.row_max[r] = m_new;
  }
}

/// See AmxFinishArgs. Rows that saw no key have sum 0: O = 0 and lse = -inf.
inline void finish(const AmxFinishArgs& a) {
  constexpr float kLn2 = 0.6931471805599453f;
  for (int64_t r = 0; r < a.rows; ++r) {
    const float sum = row_total(a.row_sum + r * kAmxSumLanes);
    if (a.lse != nullptr) {
      a.lse[r * a.lse_stride] =
          sum > 0.0f ? (a.row_max[r] + std::log2(sum)) * kLn2 : -__builtin_inff();
    }
    store_row_bf16(a.o + r * a.ld_o, a.head_dim, sum > 0.0f ? 1.0f / sum : 0.0f,
                   a.out + r * a.out_stride);
  }
}

/// The table of this TU's steps over `Tiles`.
template <class Tiles>
constexpr AmxKernels make_amx_kernels(const char* name) {
  AmxKernels table;
  table.name = name;
  table.begin_thread = &Steps<Tiles>::begin_thread;
  table.end_thread = &Steps<Tiles>::end_thread;
  table.pack_queries = &pack_queries;
  table.pack_key_tile = &pack_key_tile;
  table.pack_value_chunk = &pack_value_chunk;
  table.scores = &Steps<Tiles>::scores;
  table.softmax = &softmax;
  table.values = &Steps<Tiles>::values;
  table.finish = &finish;
  return table;
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
