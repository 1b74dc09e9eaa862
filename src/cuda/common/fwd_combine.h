// The combine of a forward's split tiles (fwd_split.h), shared by the sm80 and sm90 forwards: both
// number their tiles alike (fwd_tile_order.cuh) and write a split unit's partial result in the
// layout below.
#pragma once

#include <cstdint>

#include "cuda/sm80/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail {

/// What the combine reads and writes.
struct FwdCombineParams {
  sm80::TensorParams out;
  float* lse = nullptr;  ///< optional; addressed by (seq, head, row) strides below
  int64_t lse_seq_stride = 0, lse_head_stride = 0, lse_row_stride = 0;
  int heads = 0;
  int seqlen_q = 0;
  int head_dim = 0;  ///< real D: the columns of out written
  int num_m_blocks = 0;
  /// Tiles per query block and head, each with split_cols of V and O's columns from
  /// slice * split_cols (the sm90 forward above D = 256: 2); 1 elsewhere.
  int value_slices = 1;
  int num_tiles = 0;    ///< tiles of the forward; those from split_tile0 on are split
  int split_tile0 = 0;  ///< == num_tiles: nothing to combine
  int split_parts = 1;
  /// Partial results of the split units, unit u = (tile - split_tile0) * split_parts + part: O
  /// normalized by the part's own sum, fp32 [unit][split_rows][split_cols], and its LSE over the
  /// part's keys, [unit][split_rows] (-inf for a row that saw none of them).
  const float* split_o = nullptr;
  const float* split_lse = nullptr;
  int split_rows = 0;  ///< query rows of a tile
  int split_cols = 0;  ///< columns of a partial O row: a multiple of 4, at least a slice's
  /// Whether the combine launches as the forward's programmatic dependent (compute capability 9.0
  /// and up): its CTAs then start on the SMs the forward's last CTAs free and wait there for its
  /// partials (griddepcontrol.wait), rather than after the forward has ended.
  bool early_start = false;
};

/// Merges the split tiles' partial results into out and lse on `stream` (nothing when no tile is
/// split), once the forward kernel that wrote them has run.
void combine_split(DType dtype, const FwdCombineParams& params, void* stream);

}  // namespace flashvision::detail
