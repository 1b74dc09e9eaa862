// Pieces the forward and backward drivers share: thread count, operand addressing, packing a K/V
// block, and the causal limits of a tile. Driver code only (baseline ISA).
#pragma once

#include <omp.h>

#include <cstdint>

#include "api/problem.h"
#include "cpu/kernels.h"
#include "cpu/tiling.h"

namespace flashvision::detail::cpu {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

/// Threads the caller asked for: problem.num_threads, or all OpenMP threads when 0.
inline int64_t requested_threads(const Problem& p) {
  return p.num_threads > 0 ? p.num_threads : omp_get_max_threads();
}

/// Threads a pass uses: the requested ones, but never more than there are tasks.
inline int thread_count(const Problem& p, int64_t tasks) {
  const int64_t wanted = requested_threads(p);
  const int64_t useful = tasks < wanted ? tasks : wanted;
  return useful < 1 ? 1 : static_cast<int>(useful);
}

/// Address of element (seq, row, head, 0) of `op`, whose elements are of `dtype`.
inline void* row_address(const Operand& op, DType dtype, int64_t seq, int64_t row, int64_t head) {
  if (dtype == DType::f32) return op.at<float>(seq, row, head);
  return op.at<uint16_t>(seq, row, head);
}

/// Rows row0 .. row0 + rows of head `head` of `op`, converted to fp32 into `buffer` with row
/// pitch tile_pitch(head_dim). fp32 tensors are copied too: their row pitch (heads *
/// head_dim) is often a large power of two, which the GEMMs' column walks turn into L1 conflict
/// misses.
inline const float* pack_key_rows(const KernelTable& kt, const Problem& p, const Operand& op,
                                  int64_t seq, int64_t row0, int64_t head, int64_t rows,
                                  float* buffer) {
  const int64_t pitch = tile_pitch(p.head_dim);
  kt.pack_rows(p.dtype, row_address(op, p.dtype, seq, row0, head), op.row_stride, rows, p.head_dim,
               1.0f, buffer, pitch, p.head_dim);
  return buffer;
}

/// Rows of K or V as a GEMM reads them: `pitch` floats apart from `data` on.
struct KeyRows {
  const float* data;
  int64_t pitch;
};

/// Whether the GEMMs can read fp32 rows of `op` where they lie instead of from a packed copy: when
/// the row stride is a whole number of cache lines but not a multiple of 4, a block's rows start on
/// lines spread over at least half of L1's 64 sets (as the odd tile_pitch does), and the copy costs
/// more than it saves. Rows that start inside a line (D = 40 or 72 in the [B, H, N, D] layout) make
/// the V^T walk of the PV GEMM touch two lines per row where the packed copy touches one: up to 10 %
/// slower GEMMs on Zen 3, more than the copy. So: contiguous heads of PyTorch's layout at D = 80,
/// 112 or 160; not [B, N, H, D] rows (H * D apart), nor D = 64 or 128.
inline bool reads_rows_in_place(const Problem& p, const Operand& op) {
  constexpr int64_t kLineBytes = 64;
  constexpr int64_t kConflictBytes = 4 * kLineBytes;
  const int64_t stride_bytes = op.row_stride * 4;
  const bool rows_start_lines = reinterpret_cast<uintptr_t>(op.data) % kLineBytes == 0 &&
                                op.seq_stride * 4 % kLineBytes == 0 &&
                                op.head_stride * 4 % kLineBytes == 0 &&
                                stride_bytes % kLineBytes == 0;
  return p.dtype == DType::f32 && rows_start_lines && stride_bytes % kConflictBytes != 0;
}

/// Rows row0 .. row0 + rows of head `head` of `op` for the forward's GEMMs: in place where
/// reads_rows_in_place allows, else converted into `buffer` by pack_key_rows.
inline KeyRows key_rows_for_gemm(const KernelTable& kt, const Problem& p, const Operand& op,
                                 int64_t seq, int64_t row0, int64_t head, int64_t rows,
                                 float* buffer) {
  if (reads_rows_in_place(p, op)) return {op.at<float>(seq, row0, head), op.row_stride};
  return {pack_key_rows(kt, p, op, seq, row0, head, rows, buffer), tile_pitch(p.head_dim)};
}

/// Asks for rows row0 .. row0 + rows of head `head` of `op` to be brought into L2 while the
/// current block computes: the rows are heads * head_dim elements apart, often crossing a page
/// each, a pattern the hardware prefetchers follow poorly.
inline void prefetch_key_rows(const Problem& p, const Operand& op, int64_t seq, int64_t row0,
                              int64_t head, int64_t rows) {
  constexpr int64_t kLine = 64;
  const int64_t bytes = p.head_dim * static_cast<int64_t>(element_size(p.dtype));
  for (int64_t r = 0; r < rows; ++r) {
    const char* row = static_cast<const char*>(row_address(op, p.dtype, seq, row0 + r, head));
    for (int64_t at = 0; at < bytes; at += kLine) __builtin_prefetch(row + at, 0, 2);
  }
}

/// The key block [k0, k0 + keys) is partly hidden from the query rows [q0, q0 + rows) under the
/// causal mask: visible_keys grows with the row, so the first row decides.
inline bool block_needs_mask(const Problem& p, const SeqBounds& b, int64_t q0, int64_t k0,
                             int64_t keys) {
  return p.causal && k0 + keys > p.visible_keys(q0, b.q_len, b.k_len);
}

/// Per lane (query row q0 + i), the keys of the block at k0 it may see, in [0, keys] and so exact
/// as float; padding lanes get `keys` (they are never stored).
inline void fill_visible(const Problem& p, const SeqBounds& b, int64_t q0, int64_t rows,
                         int64_t lanes, int64_t k0, int64_t keys, float* visible) {
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t seen = p.visible_keys(q0 + i, b.q_len, b.k_len) - k0;
    visible[i] = static_cast<float>(seen < 0 ? 0 : (seen > keys ? keys : seen));
  }
  for (int64_t i = rows; i < lanes; ++i) visible[i] = static_cast<float>(keys);
}

}  // namespace flashvision::detail::cpu
