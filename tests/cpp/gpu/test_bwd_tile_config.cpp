// The sm80 backward's tile configuration (tile_config.h), host-only, no GPU needed: how each warp
// GEMM's output is split over the 8 warps (warp_grid; the backward is bound by ldmatrix traffic,
// so the grid with the fewest shared-memory loads per mma is the one wanted, and every bucket
// needs whole mma tiles), and which tile variant a device's shared memory allows.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cuda/sm80/tile_config.h"

namespace flashvision::testing {
namespace {

using detail::sm80::bwd_query_pitch;
using detail::sm80::bwd_query_slot_bytes;
using detail::sm80::bwd_query_swizzled;
using detail::sm80::bwd_smem_bytes;
using detail::sm80::bwd_tile;
using detail::sm80::bwd_tile_variant;
using detail::sm80::BwdTile;
using detail::sm80::kHeadDimBuckets;
using detail::sm80::warp_grid;
using detail::sm80::WarpGrid;

void expect_grid(const WarpGrid& g, int row_warps, int m_tiles, int n_tiles) {
  EXPECT_EQ(g.row_warps, row_warps);
  EXPECT_EQ(g.m_tiles, m_tiles);
  EXPECT_EQ(g.n_tiles, n_tiles);
}

TEST(BwdWarpGrid, SquareWarpTilesWhereTheyFit) {
  // S^T of 128 keys x 64 queries: 32 x 32 per warp (4 x4 loads per 8 mma; 16 x 64 needs 5).
  expect_grid(warp_grid(128, 64, 8), 4, 2, 4);
  // dK, dV of 128 keys x D=128: 32 keys x 64 dims (6 loads per 16 mma; 16 x 128 needs 9).
  expect_grid(warp_grid(128, 128, 8), 4, 2, 8);
  // dQ of 64 queries x D=128: 32 x 32.
  expect_grid(warp_grid(64, 128, 8), 2, 2, 4);
  // D=256: dQ (64 queries) and dK, dV (64 keys) x 256: 32 x 64 (6 loads per 16 mma; 16 x 128: 9).
  expect_grid(warp_grid(64, 256, 8), 2, 2, 8);
}

TEST(BwdWarpGrid, DimTwoFiftySixTakesDqInTwoPasses) {
  // dQ of 64 queries x 128 columns per pass: 32 x 32 per warp, 32 accumulator registers instead
  // of 64 (4 loads per 8 mma instead of 6 per 16), next to the 128 of dK and dV.
  for (int variant = 0; variant < 2; ++variant) EXPECT_EQ(bwd_tile(256, variant).dq_passes, 2);
  EXPECT_EQ(bwd_tile(128, 1).dq_passes, 1);
  expect_grid(warp_grid(64, 128, 8), 2, 2, 4);
}

TEST(BwdWarpGrid, DimFiveTwelveTakes32KeysAndDqInFourPasses) {
  const BwdTile t = bwd_tile(512);
  EXPECT_EQ(t.block_n, 32);
  EXPECT_EQ(t.block_m, 64);
  EXPECT_EQ(t.dq_passes, 4);
  // dK, dV of 32 keys x 512: each warp all 32 keys x 64 columns, 2 x 8 tiles, 64 fp32 registers
  // for each (128 for both, as D = 256 with 64 keys); 16 x 128 per warp would load 18 halves of
  // ldmatrix per 16 mma instead of 12.
  expect_grid(warp_grid(32, 512, 8), 1, 2, 8);
  // S^T and dP^T of 32 keys x 64 queries: 16 x 16 per warp.
  expect_grid(warp_grid(32, 64, 8), 2, 1, 2);
  // dQ per pass: 64 queries x 128 columns, 32 x 32 per warp (32 registers).
  expect_grid(warp_grid(64, 512 / t.dq_passes, 8), 2, 2, 4);
}

TEST(BwdWarpGrid, TiesKeepMoreRowWarps) {
  // 64 x 64: 16 x 32 and 32 x 16 per warp both need 3 loads per 4 mma.
  expect_grid(warp_grid(64, 64, 8), 4, 1, 4);
}

TEST(BwdWarpGrid, ColumnsThatDoNotSplitEvenlyStayWhole) {
  // dQ of 64 queries x D=48 or 80: a quarter of the head dim is not a multiple of 8.
  expect_grid(warp_grid(64, 48, 8), 4, 1, 3);
  expect_grid(warp_grid(64, 80, 8), 4, 1, 5);
  EXPECT_EQ(warp_grid(8, 64, 8).row_warps, 0);  // fewer than 16 rows per warp: no grid
  expect_grid(warp_grid(128, 64, 8, 8), 8, 1, 8);  // restricted to 8 row warps
}

TEST(BwdWarpGrid, EveryBucketGetsWholeTiles) {
  for (int dim : kHeadDimBuckets) {
    for (int variant = 0; variant < detail::sm80::kBwdTileVariants; ++variant) {
      const BwdTile t = bwd_tile(dim, variant);
      if (t.block_m == 0) continue;
      SCOPED_TRACE("head dim " + std::to_string(dim) + ", variant " + std::to_string(variant));
      const WarpGrid grids[] = {warp_grid(t.block_n, t.block_m, t.warps, t.sdp_key_warps),
                                warp_grid(t.block_n, dim, t.warps),
                                warp_grid(t.block_m, dim / t.dq_passes, t.warps)};
      const int rows[] = {t.block_n, t.block_n, t.block_m};
      const int cols[] = {t.block_m, dim, dim / t.dq_passes};
      EXPECT_EQ(dim % t.dq_passes, 0);
      for (int i = 0; i < 3; ++i) {
        ASSERT_GT(grids[i].row_warps, 0);
        EXPECT_EQ(grids[i].row_warps * grids[i].col_warps, t.warps);
        EXPECT_EQ(grids[i].row_warps * grids[i].m_tiles * 16, rows[i]);
        EXPECT_EQ(grids[i].col_warps * grids[i].n_tiles * 8, cols[i]);
      }
    }
  }
}

// Opt-in shared memory per block: H100/H200, A100, and compute capability 8.6/8.9.
constexpr std::size_t kHopperSmem = 227 * 1024, kA100Smem = 163 * 1024, kSm86Smem = 99 * 1024;

TEST(BwdTileVariant, TheHighestTheSharedMemoryAllows) {
  // Hopper: 128 query rows and two slots up to D = 64, two slots of 64 rows above.
  for (int dim : {32, 48, 64}) EXPECT_EQ(bwd_tile_variant(dim, kHopperSmem), 2) << dim;
  for (int dim : {96, 128, 160, 192, 256}) EXPECT_EQ(bwd_tile_variant(dim, kHopperSmem), 1) << dim;
  EXPECT_EQ(bwd_tile_variant(48, kA100Smem), 2);
  EXPECT_EQ(bwd_tile_variant(64, kA100Smem), 1);
  EXPECT_EQ(bwd_tile_variant(128, kA100Smem), 0);
  EXPECT_EQ(bwd_tile_variant(256, kA100Smem), 0);
  EXPECT_EQ(bwd_tile_variant(32, kSm86Smem), 1);
  EXPECT_EQ(bwd_tile_variant(64, kSm86Smem), 0);
}

TEST(BwdTileVariant, DimFiveTwelveFitsHopperOnly) {
  // K, V (32 rows of pitch 520), P^T, dS^T (32 x 72), one slot of Q, dO (64 x 520) with 64 LSE and
  // D floats: 204.5 KiB, within Hopper's 227 KiB opt-in, past A100's 163 KiB.
  const std::size_t bytes = 2 * 32 * 520 * 2 + 2 * 32 * 72 * 2 + 2 * 64 * 520 * 2 + 2 * 64 * 4;
  EXPECT_EQ(bwd_smem_bytes(512), bytes);
  EXPECT_LE(bytes, kHopperSmem);
  EXPECT_GT(bytes, kA100Smem);
  EXPECT_EQ(bwd_tile_variant(512, kHopperSmem), 0);
  for (int variant = 1; variant < detail::sm80::kBwdTileVariants; ++variant) {
    EXPECT_EQ(bwd_tile(512, variant).block_m, 0) << variant;
  }
}

TEST(BwdTileVariant, DimEightyHasOnlyTheFirst) {
  EXPECT_EQ(bwd_tile_variant(80, kHopperSmem), 0);  // the others spilled (tile_config.h)
  EXPECT_EQ(bwd_tile(80, 1).block_m, 0);
}

TEST(BwdTileVariant, VariantsShareTheKeyBlockAndGrowTheSharedMemory) {
  for (int dim : kHeadDimBuckets) {
    SCOPED_TRACE("head dim " + std::to_string(dim));
    const BwdTile base = bwd_tile(dim, 0);
    EXPECT_EQ(base.query_slots, 1);
    for (int variant = 1; variant < detail::sm80::kBwdTileVariants; ++variant) {
      const BwdTile t = bwd_tile(dim, variant);
      if (t.block_m == 0) continue;
      EXPECT_EQ(t.block_n, base.block_n);
      EXPECT_EQ(t.query_slots, 2);
      EXPECT_GT(bwd_smem_bytes(dim, variant), bwd_smem_bytes(dim, variant - 1));
      EXPECT_LE(bwd_smem_bytes(dim, variant), kHopperSmem);
    }
  }
}

TEST(BwdTileVariant, SharedMemoryOfTheSecondSlot) {
  // D = 128, 64 x 128 tile: K, V (128 rows of pitch 136 elements of 2 bytes), P^T, dS^T (128 x 64,
  // pitch 72), then per slot Q, dO (64 swizzled rows of 128) and 64 LSE and D floats.
  const std::size_t slot = 2 * 64 * 128 * 2 + 2 * 64 * 4;
  EXPECT_EQ(bwd_smem_bytes(128, 0), 2 * 128 * 136 * 2 + 2 * 128 * 72 * 2 + slot);
  EXPECT_EQ(bwd_smem_bytes(128, 1), bwd_smem_bytes(128, 0) + slot);
  // D = 96: padded Q, dO rows (pitch 104).
  const std::size_t slot96 = 2 * 64 * 104 * 2 + 2 * 64 * 4;
  EXPECT_EQ(bwd_smem_bytes(96, 1), bwd_smem_bytes(96, 0) + slot96);
}

TEST(BwdQuerySwizzle, WholeLineRowsOnly) {
  // Q and dO rows of whole 128-byte lines that the tile's threads copy in whole rows, 4k rows a
  // pass, are swizzled (pitch = head dim): D = 64, 128 and 256, not 192 (24 chunks a row) or 512.
  // The others are padded by 16 bytes; every swizzled slot keeps the 128-byte alignment the
  // swizzle's XOR needs.
  for (int dim : kHeadDimBuckets) {
    SCOPED_TRACE("head dim " + std::to_string(dim));
    const bool whole_lines = dim == 64 || dim == 128 || dim == 256;
    EXPECT_EQ(bwd_query_swizzled(dim), whole_lines);
    EXPECT_EQ(bwd_query_pitch(dim), whole_lines ? dim : dim + 8);
    for (int variant = 0; variant < detail::sm80::kBwdTileVariants; ++variant) {
      const BwdTile t = bwd_tile(dim, variant);
      if (t.block_m == 0 || !whole_lines) continue;
      EXPECT_EQ(bwd_query_slot_bytes(dim, variant) % 128, 0u) << variant;
      // K, V and P^T, dS^T in front of the first slot.
      const std::size_t front = static_cast<std::size_t>(2 * t.block_n) * (dim + 8) * 2 +
                                static_cast<std::size_t>(2 * t.block_n) * (t.block_m + 8) * 2;
      EXPECT_EQ(front % 128, 0u) << variant;
    }
  }
}

}  // namespace
}  // namespace flashvision::testing
