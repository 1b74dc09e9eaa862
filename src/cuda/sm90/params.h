// Kernel parameters of the sm90 forward, filled once on the host from a validated Problem.
#pragma once

#include <cuda.h>

#include "cuda/common/fast_divisor.h"
#include "cuda/sm80/params.h"

namespace flashvision::detail::sm90 {

/// Forward parameters: the sm80 geometry plus TMA descriptors of Q, K and V. The tensor maps
/// address [sequence][row][head][dim] with the real head dim as the innermost extent, so the
/// padded columns of a bucket and rows past the tensor arrive as zeros.
struct FwdParams {
  sm80::ShapeParams shape;
  sm80::TensorParams out;
  float* lse = nullptr;  ///< optional; addressed by (seq, head, row) strides below
  int64_t lse_seq_stride = 0, lse_head_stride = 0, lse_row_stride = 0;
  int num_m_blocks = 0;
  int num_tiles = 0;  ///< num_m_blocks x heads x sequences x value_slices (tile_config.h)
  /// Work units of the schedule: the tiles before split_tile0 whole, then split_parts key ranges
  /// of each tile from split_tile0 on (the last wave's tiles, common/fwd_split.h). Without a
  /// split, num_units == split_tile0 == num_tiles.
  int num_units = 0;
  int split_tile0 = 0;
  int split_parts = 1;
  int split_blocks = 0;  ///< key blocks of a part (the last part of a tile may have fewer)
  int grid_ctas = 0;     ///< persistent CTAs: min(num_units, SMs)
  /// locate_work's divisors (num_m_blocks, heads, the GQA group, split_parts), made on the host.
  FastDivisor m_blocks_divisor, heads_divisor, group_divisor, split_parts_divisor;
  /// 1: every unit is a whole tile of a single key block, and the consumers pipeline across tiles
  /// (tile_config.h's fwd_cross_tile; 128-row tiles only).
  int cross_tile = 0;
  /// 1: clusters of kKvMulticastCtas CTAs share every K and V block, each CTA loading its share of
  /// the block's rows into all of them (tile_config.h's fwd_kv_multicast; tmap_k and tmap_v then
  /// have boxes of that share).
  int kv_multicast = 0;
  /// 1: every unit is a whole tile of two key blocks or more whose last block holds at most
  /// tile_config.h's narrow_first_keys keys of the sequence, and the consumers take only those
  /// of it in S = Q K^T, the mask and the softmax of a tile's first block; dense, non-causal,
  /// unsplit.
  int narrow_first = 0;
  /// Columns of V and O a tile covers, which picks the kernel: tile_config.h's value_columns, or
  /// its sliced_value_columns where the host slices the tiles (fwd_value_sliced); the tiles of a
  /// query block then cover successive slices of that width.
  int value_cols = 0;
  /// Partial results of the split units (unit - split_tile0 indexes them): O normalized by the
  /// part's own sum, fp32 [unit][block rows][split_cols], and its LSE [unit][block rows]. The
  /// combine kernel (common/fwd_combine.h) merges a tile's parts into out and lse.
  float* split_o = nullptr;
  float* split_lse = nullptr;
  int split_rows = 0;  ///< query rows of a tile (kBlockM)
  int split_cols = 0;  ///< columns of V and O (kHeadDimV)
  CUtensorMap tmap_q;  ///< box: one swizzle panel x kBlockM rows
  CUtensorMap tmap_k;  ///< box: one swizzle panel x kBlockN rows (a CTA's share with kv_multicast)
  /// V as it lies (box: one swizzle panel x kBlockN rows), or in FP8 where fp8_values_transposed
  /// is 1 as transpose_fp8_values wrote it ([sequence][head][panel][D][panel keys],
  /// fp8_values.h; box: a panel).
  CUtensorMap tmap_v;
  /// FP8: 1 where a pass before the kernel transposed V (tmap_v), which the producer then loads
  /// into the V stages; 0 where the producer warpgroup's other warps transpose each block in shared
  /// memory (fwd_value_transposer.cuh).
  int fp8_values_transposed = 0;
  /// 1: each consumer warpgroup multiplies its rows of each tile's Q by q_scale (the softmax's
  /// scale * log2(e)) in shared memory before its first GEMM (fwd_query_scaler.cuh); the
  /// scores then carry the scale, and shape.scale_log2 is 1 and shape.scale ln 2 (the LSE's
  /// factor from log2 units). 16-bit inputs only (tile_config.h's fwd_q_prescaled).
  int q_prescaled = 0;
  float q_scale = 1.0f;
  /// FP8: the factor V's stored values stand for (O is normalized by it as well); Q's and K's
  /// are in the softmax scale.
  float descale_v = 1.0f;
  /// Where the diagnostic timelines go (fwd_timeline_layout.h); set only in builds with
  /// FLASHVISION_SM90_TIMELINES, and then only where the environment asks for them.
  unsigned long long* timeline = nullptr;
};

/// Backward main-kernel parameters: the sm80 backward's (shapes, operands, workspaces, which the
/// preprocess and dQ convert kernels of the sm80 path also use) plus TMA descriptors. Q and dO
/// boxes are kBwdBlockM rows, K and V boxes kBwdBlockN rows, all one swizzle panel wide.
struct BwdParams {
  sm80::BwdParams base;
  CUtensorMap tmap_q;
  CUtensorMap tmap_k;
  CUtensorMap tmap_v;
  CUtensorMap tmap_dout;
  CUtensorMap tmap_dq_accum;  ///< the fp32 dQ workspace, for tiles with staged_dq
};

}  // namespace flashvision::detail::sm90
