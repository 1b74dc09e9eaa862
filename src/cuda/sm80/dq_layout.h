// Where element (row, col) of one head's fp32 dQ workspace lives, in the two layouts of
// BwdDqLayout. The main kernels add into it and the convert kernel reads it, so both take their
// offsets from here. Plain host/device code, kept apart from the kernels so that a host test can
// check the mapping.
#pragma once

#include <cstdint>

#include "cuda/common/host_device.h"

namespace flashvision::detail::sm80 {

/// Rows and columns of one tile of the tiled layout: an mma accumulator's 8 rows x 8 columns,
/// what one warp-wide float2 atomic adds.
inline constexpr int kDqTileRows = 8;
inline constexpr int kDqTileCols = 8;

/// Rows per head of the dQ workspace for `rows` rows: the tiled layout stores whole 8-row groups.
constexpr int64_t dq_head_rows(int64_t rows, bool tiled) {
  return tiled ? (rows + kDqTileRows - 1) / kDqTileRows * kDqTileRows : rows;
}

/// Offset of (row, col) in a head's dQ workspace of `head_dim` columns (a multiple of 8; row and
/// col not negative). Rows: row-major. Tiled: each group of 8 rows is a run of 8 x 8 tiles, one
/// per 8 columns, each tile row-major. Both give row + 8k the offset of row plus 8k * head_dim, so
/// a caller can step over 8-row groups alike; 8 columns further is +8 (rows) or +64 (tiled,
/// dq_column_step). Shifts and masks, not signed divisions: fewer instructions in the kernels,
/// which pass 32-bit offsets within a block (`Index`).
template <bool kTiled, typename Index>
FLASHVISION_HOST_DEVICE constexpr Index dq_offset(Index row, int col, int head_dim) {
  static_assert(kDqTileRows == 8 && kDqTileCols == 8, "the shifts below assume 8 x 8 tiles");
  if constexpr (kTiled) {
    return (row >> 3) * (Index{8} * head_dim) + (row & 7) * 8 + ((col >> 3) << 6) + (col & 7);
  } else {
    return row * head_dim + col;
  }
}

/// Offset step from column c to column c + 8 of the same row.
template <bool kTiled>
inline constexpr int dq_column_step = kTiled ? kDqTileRows * kDqTileCols : kDqTileCols;

}  // namespace flashvision::detail::sm80
