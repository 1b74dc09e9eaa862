// The sm90 forward's cross-tile pipeline (src/cuda/sm90/fwd_consumer.cuh, run_cross_tile): where
// every tile of the schedule is one key block, a consumer issues S = Q K of its next tile with
// O += P V of the current one. The choice is checked on its own; the GPU cases run problems it
// applies to with it on and off (FLASHVISION_SM90_FWD_CROSS_TILE=0) against the float64
// reference: one tile per CTA (prologue and last P V only), several tiles per CTA whose K/V ring
// and Q buffer go round, partial query and key blocks, padded head dims, grouped heads, strides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kCrossTileVar = "FLASHVISION_SM90_FWD_CROSS_TILE";

/// The choice for a dense problem of `seqlen_k` keys in `bucket` with 128-row tiles.
constexpr bool cross_tile(int bucket, long long seqlen_k, bool causal = false) {
  return sm90::fwd_cross_tile(bucket, sm90::kNarrowBlockM, sm90::fwd_block_n(bucket, seqlen_k),
                              seqlen_k, causal, false, false);
}

TEST(Sm90CrossTileChoice, OneKeyBlockTilesPipelineAcrossTiles) {
  EXPECT_TRUE(cross_tile(64, 197));   // ViT-B/16: one 208-key block
  EXPECT_TRUE(cross_tile(64, 77));    // SDXL cross attention
  EXPECT_TRUE(cross_tile(48, 77));    // SD 1.5 cross attention (D = 40)
  EXPECT_TRUE(cross_tile(128, 176));  // a whole long block
  EXPECT_TRUE(cross_tile(128, 177));  // one block of the second long width (192)
  EXPECT_TRUE(cross_tile(64, 1));
}

TEST(Sm90CrossTileChoice, OtherSchedulesKeepThePerTileLoop) {
  EXPECT_FALSE(cross_tile(64, 577));  // ViT-L/14-336: three key blocks
  EXPECT_FALSE(cross_tile(128, 193));  // two blocks of 176
  EXPECT_FALSE(cross_tile(64, 197, /*causal=*/true));
  EXPECT_FALSE(cross_tile(64, 0));
  EXPECT_FALSE(sm90::fwd_cross_tile(64, 128, 208, 197, false, /*varlen=*/true, false));
  EXPECT_FALSE(sm90::fwd_cross_tile(64, 128, 208, 197, false, false, /*split=*/true));
  EXPECT_FALSE(sm90::fwd_cross_tile(64, 192, 128, 100, false, false, false));  // wide tile
}

TEST(Sm90CrossTileChoice, TheWideTextTilePipelinesAcrossTiles) {
  EXPECT_TRUE(sm90::fwd_cross_tile(64, 192, 80, 77, false, false, false));
  EXPECT_FALSE(sm90::fwd_cross_tile(64, 192, 80, 77, /*causal=*/true, false, false));
}

class GpuSm90CrossTile : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }

  /// Runs `c` with the pipeline on and off; the choice must apply to it (128-row tiles forced).
  static void check_both(const AttentionCase& c) {
    const int bucket = sm90::head_dim_bucket(c.head_dim);
    ASSERT_TRUE(cross_tile(bucket, c.seqlen_k)) << c.describe();
    ScopedEnv rows("FLASHVISION_SM90_FWD_ROWS", "128");
    for (const char* mode : {"auto", "0"}) {
      ScopedEnv env(kCrossTileVar, mode);
      SCOPED_TRACE(std::string(kCrossTileVar) + "=" + mode);
      check_forward(target(), c);
    }
  }
};

TEST_P(GpuSm90CrossTile, EveryBucketOneTilePerCta) {
  // A head or two of 50 or 130 rows: each CTA runs one tile (or none).
  for (const int64_t dim : {32, 40, 64, 72, 80, 96, 128, 160, 192, 256, 512}) {
    const int64_t block_n = sm90::fwd_block_n(sm90::head_dim_bucket(dim), 77);
    for (const int64_t nk : {int64_t{1}, std::min<int64_t>(77, block_n)}) {
      AttentionCase c = dense_case(dtype(), dim == 512 ? 50 : 130, nk, dim);
      c.heads = c.heads_kv = 2;
      check_both(c);
    }
  }
}

TEST_P(GpuSm90CrossTile, ManyTilesPerCta) {
  // 3 x 50 (sequence, head) pairs x 2 query blocks (197 rows: the second mostly padding): 300
  // tiles on the persistent CTAs, so every CTA walks two or three and the rings go round.
  AttentionCase vit = dense_case(dtype(), 197, 197, 64);
  vit.batch = 3;
  vit.heads = vit.heads_kv = 50;
  check_both(vit);
  // Cross attention to 77 tokens at D = 40 (bucket 48, 96-key blocks), 11 query blocks a head.
  AttentionCase cross = dense_case(dtype(), 1300, 77, 40);
  cross.heads = cross.heads_kv = 16;
  check_both(cross);
  // A whole 176-key block at D = 128 with padded head columns (120).
  AttentionCase wide_head = dense_case(dtype(), 300, 176, 120);
  wide_head.heads = wide_head.heads_kv = 60;
  check_both(wide_head);
}

TEST_P(GpuSm90CrossTile, GroupedHeadsAndStrides) {
  AttentionCase gqa = dense_case(dtype(), 250, 197, 64);
  gqa.batch = 2;
  gqa.heads = 48;
  gqa.heads_kv = 16;
  check_both(gqa);
  AttentionCase mqa = dense_case(dtype(), 400, 60, 80);
  mqa.heads = 40;
  mqa.heads_kv = 1;
  mqa.layout = Layout::torch;
  mqa.row_pad = 8;
  mqa.with_lse = false;
  check_both(mqa);
}

TEST_P(GpuSm90CrossTile, ABadValueIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 64, 64), kCrossTileVar, "yes");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90CrossTile, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
