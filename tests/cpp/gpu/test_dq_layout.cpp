// The sm80 backward's dQ workspace layouts (src/cuda/sm80/dq_layout.h), host-only, no GPU needed.
// The main kernels add into the workspace and the convert kernel reads it through dq_offset, so a
// mapping that sent two elements to one float, or left the head's floats, would corrupt dQ only
// where the kernels happen to meet; here every element of a head is checked. The tiled layout is
// there for the atomics: one warp's mma tile of 8 rows x 8 columns must be one contiguous run.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/sm80/dq_layout.h"

namespace flashvision::testing {
namespace {

using detail::sm80::dq_column_step;
using detail::sm80::dq_head_rows;
using detail::sm80::dq_offset;

/// Every (row, col) of `rows` x `head_dim` lands on its own float of the head's
/// dq_head_rows x head_dim workspace.
template <bool kTiled>
void expect_one_to_one(int64_t rows, int head_dim) {
  const int64_t floats = dq_head_rows(rows, kTiled) * head_dim;
  std::vector<int> hits(static_cast<std::size_t>(floats), 0);
  for (int64_t row = 0; row < rows; ++row) {
    for (int col = 0; col < head_dim; ++col) {
      const int64_t at = dq_offset<kTiled>(row, col, head_dim);
      ASSERT_GE(at, 0) << row << "," << col;
      ASSERT_LT(at, floats) << row << "," << col;
      ++hits[static_cast<std::size_t>(at)];
    }
  }
  for (int64_t i = 0; i < floats; ++i) {
    // The tiled layout's padding rows (past `rows` in the last 8-row group) stay unused.
    if (hits[static_cast<std::size_t>(i)] > 1) FAIL() << "float " << i << " holds two elements";
  }
}

TEST(DqLayout, EveryElementHasItsOwnFloat) {
  for (const int64_t rows : {1, 7, 8, 9, 64, 391}) {
    for (const int head_dim : {8, 40, 64, 104, 256, 512}) {
      SCOPED_TRACE(std::to_string(rows) + " rows, D = " + std::to_string(head_dim));
      expect_one_to_one<false>(rows, head_dim);
      expect_one_to_one<true>(rows, head_dim);
    }
  }
}

TEST(DqLayout, TiledHeadsHoldWholeRowGroups) {
  EXPECT_EQ(dq_head_rows(391, true), 392);
  EXPECT_EQ(dq_head_rows(392, true), 392);
  EXPECT_EQ(dq_head_rows(391, false), 391);
}

// What add_dq_tiles relies on: a lane's element of an mma tile (row lane / 4, columns 2 (lane % 4)
// and + 1) at 8k rows and 8j columns further sits 8k * head_dim + j * dq_column_step floats
// further, in both layouts; in the tiled one the warp's 64 floats of one tile are contiguous.
template <bool kTiled>
void expect_tile_steps(int64_t first_row, int first_col, int head_dim) {
  for (int lane = 0; lane < 32; ++lane) {
    const int64_t row = first_row + lane / 4;
    const int col = first_col + 2 * (lane % 4);
    const int64_t base = dq_offset<kTiled>(row, col, head_dim);
    EXPECT_EQ(dq_offset<kTiled>(row, col + 1, head_dim), base + 1);
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j + first_col / 8 < head_dim / 8; ++j) {
        EXPECT_EQ(dq_offset<kTiled>(row + 8 * k, col + 8 * j, head_dim),
                  base + 8 * k * head_dim + j * dq_column_step<kTiled>);
      }
    }
  }
}

TEST(DqLayout, TileStepsAreTheSameForEveryLane) {
  for (const int64_t first_row : {0, 3, 64, 390}) {
    SCOPED_TRACE(first_row);
    expect_tile_steps<false>(first_row, 0, 64);
    expect_tile_steps<true>(first_row, 0, 64);
    expect_tile_steps<false>(first_row, 16, 104);
    expect_tile_steps<true>(first_row, 16, 104);
  }
}

TEST(DqLayout, OneTiledMmaTileIsOneRunOf64Floats) {
  const int head_dim = 128;
  const int64_t first = dq_offset<true>(64, 32, head_dim);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(dq_offset<true>(64 + lane / 4, 32 + 2 * (lane % 4), head_dim), first + 2 * lane);
  }
}

}  // namespace
}  // namespace flashvision::testing
