// The sm90 backward's per-bucket tiles (src/cuda/sm90/bwd_config.h), host-only, no GPU needed:
// which buckets it serves, that its two consumers' dQ column ranges (whole panels, one wgmma N for
// both) add every column of the head dim exactly once, that the staged dQ's boxes cover those
// ranges, and that the tiles fit and stay aligned.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/sm90/bwd_config.h"
#include "cuda/sm90/tile_config.h"

namespace flashvision::testing {
namespace {

using detail::sm90::bwd_bucket_supported;
using detail::sm90::bwd_smem_bytes;
using detail::sm90::bwd_smem_offsets;
using detail::sm90::bwd_tile;
using detail::sm90::BwdTile;
using detail::sm90::kBwdBlockM;
using detail::sm90::kBwdBlockN;
using detail::sm90::kBwdDqBoxBytes;
using detail::sm90::kBwdDqBoxCols;
using detail::sm90::kHeadDimBuckets;
using detail::sm90::kMaxSmemBytes;

TEST(Sm90BwdTile, ServesEveryBucketUpTo128) {
  for (const int bucket : kHeadDimBuckets) {
    EXPECT_EQ(bwd_bucket_supported(bucket), bucket <= 128) << "bucket " << bucket;
  }
}

TEST(Sm90BwdTile, ConsumersAddEveryDqColumnOnce) {
  for (const int bucket : kHeadDimBuckets) {
    if (!bwd_bucket_supported(bucket)) continue;
    SCOPED_TRACE("bucket " + std::to_string(bucket));
    const BwdTile t = bwd_tile(bucket);
    ASSERT_EQ(t.bucket, bucket);
    ASSERT_EQ(t.panels() * t.panel_cols(), bucket) << "whole panels";
    // The consumers' ranges overlap or meet; they cannot leave a gap.
    ASSERT_GE(t.shared_dq_panels(), 0);
    // The N of the dQ wgmma: the shapes tools/gen/wgmma_ops.py generates for wgmma_ss_mn.
    EXPECT_TRUE(t.dq_cols() == 16 || t.dq_cols() == 32 || t.dq_cols() == 48 || t.dq_cols() == 64)
        << t.dq_cols();
    // As bwd_kernel.cuh's add_dq: consumer c computes from panel c (panels - dq_panels) on and
    // adds its columns from c x shared_dq_panels panels on.
    std::vector<int> adds(bucket, 0);
    for (int consumer = 0; consumer < 2; ++consumer) {
      const int col0 = consumer * (t.panels() - t.dq_panels) * t.panel_cols();
      for (int col = consumer * t.shared_dq_panels() * t.panel_cols(); col < t.dq_cols(); ++col) {
        ASSERT_LT(col0 + col, bucket);
        ++adds[col0 + col];
      }
    }
    for (int col = 0; col < bucket; ++col) EXPECT_EQ(adds[col], 1) << "column " << col;
    // Columns computed twice: at most a third more dQ GEMM than the head dim needs.
    EXPECT_LE(3 * 2 * t.dq_cols(), 4 * bucket);
  }
}

TEST(Sm90BwdTile, OddPanelCountsShareOnePanel) {
  EXPECT_EQ(bwd_tile(48).shared_dq_panels(), 1);
  EXPECT_EQ(bwd_tile(80).shared_dq_panels(), 1);
  for (const int bucket : {32, 64, 96, 128}) {
    EXPECT_EQ(bwd_tile(bucket).shared_dq_panels(), 0) << "bucket " << bucket;
  }
}

TEST(Sm90BwdTile, StagedDqBoxesCoverEachConsumersColumns) {
  for (const int bucket : kHeadDimBuckets) {
    if (!bwd_bucket_supported(bucket)) continue;
    SCOPED_TRACE("bucket " + std::to_string(bucket));
    const BwdTile t = bwd_tile(bucket);
    EXPECT_EQ(t.staged_dq, bucket == 64 || bucket == 128) << "measured in session 15";
    const auto o = bwd_smem_offsets(bucket);
    if (!t.staged_dq) {
      EXPECT_EQ(o.rows, o.dq_stage) << "no staging";
      continue;
    }
    // Each consumer's range and the columns consumer 1 leaves out are whole boxes (add_dq_staged).
    EXPECT_EQ(t.dq_cols() % kBwdDqBoxCols, 0);
    EXPECT_EQ((t.panels() - t.dq_panels) * t.panel_cols() % kBwdDqBoxCols, 0);
    EXPECT_EQ(t.shared_dq_panels() * t.panel_cols() % kBwdDqBoxCols, 0);
    // Two consumers' boxes, each starting on the 64-byte swizzle's 512-byte period.
    EXPECT_EQ(o.rows - o.dq_stage, 2 * (t.dq_cols() / kBwdDqBoxCols) * kBwdDqBoxBytes);
    EXPECT_EQ(o.dq_stage % 512, 0u);
    EXPECT_EQ(kBwdDqBoxBytes % 512, 0u);
  }
}

TEST(Sm90BwdTile, SharedMemoryFitsAndPanelsStayAligned) {
  for (const int bucket : kHeadDimBuckets) {
    if (!bwd_bucket_supported(bucket)) continue;
    SCOPED_TRACE("bucket " + std::to_string(bucket));
    EXPECT_LE(bwd_smem_bytes(bucket), kMaxSmemBytes);
    // TMA and wgmma agree on the swizzle pattern from 1024-byte aligned panels on.
    const int swizzle = bwd_tile(bucket).swizzle_bytes;
    EXPECT_EQ(kBwdBlockM * swizzle % 1024, 0);
    EXPECT_EQ(kBwdBlockN / 2 * swizzle % 1024, 0) << "a consumer's 64 keys of K and V";
    const auto o = bwd_smem_offsets(bucket);
    for (const std::size_t offset : {o.k, o.v, o.q, o.dout, o.ds}) EXPECT_EQ(offset % 1024, 0u);
  }
}

}  // namespace
}  // namespace flashvision::testing
