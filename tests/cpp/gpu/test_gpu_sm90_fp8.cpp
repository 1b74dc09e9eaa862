// The Hopper forward in FP8: q, k, v in e4m3, out in bf16, against the float64 reference of the
// stored values times their descales. Every FP8 bucket (64, 128, 256) and head dims padded into
// them; key counts that leave partial 32-key groups of the transposed V and partial blocks of
// every key width; one-block tiles (the cross-tile pipeline), split last waves, grouped heads, both
// layouts with padded rows, the causal mask, descales, and ramped scores that move a row's max.
// Both ways of transposing V, in the kernel and in a pass before it. The host tests check the
// transposed V's key order and the FP8 forward's choices of tile and transposition.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "attention_check.h"
#include "cuda/sm90/fp8_values.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

TEST(Sm90Fp8Values, EachGroupOf32KeysIsAPermutation) {
  std::set<int> keys;
  for (int position = 0; position < 32; ++position) keys.insert(sm90::fp8_key_at(position));
  EXPECT_EQ(keys.size(), 32u);
  EXPECT_EQ(*keys.begin(), 0);
  EXPECT_EQ(*keys.rbegin(), 31);
  // Thread t's first register of a row holds its columns 2t, 2t + 1 of tiles 0 and 1.
  EXPECT_EQ(sm90::fp8_key_at(4), 2);
  EXPECT_EQ(sm90::fp8_key_at(6), 10);
  EXPECT_EQ(sm90::fp8_key_at(19), 25);
}

TEST(Sm90Fp8Tile, TilesFitAndHoldWholeValuePanels) {
  for (const int bucket : sm90::kHeadDimBuckets) {
    if (!sm90::fp8_bucket(bucket)) continue;
    for (const int rows : {sm90::kNarrowBlockM, sm90::wide_block_m(bucket)}) {
      for (const int keys : {sm90::fp8_block_n(bucket), sm90::fp8_second_block_n(bucket)}) {
        if (!sm90::fp8_tile_exists(bucket, rows, keys)) continue;
        SCOPED_TRACE("bucket " + std::to_string(bucket) + ", " + std::to_string(rows) + " x " +
                     std::to_string(keys));
        const sm90::FwdTile t = sm90::fp8_fwd_tile(bucket, rows, keys);
        EXPECT_TRUE(sm90::fwd_tile_exists(bucket, t.block_m, t.block_n, 1));
        EXPECT_FALSE(sm90::fwd_tile_exists(bucket, t.block_m, t.block_n + 16, 1));
        EXPECT_EQ(t.block_n % sm90::fp8_value_panel_keys(t.block_n), 0);
        EXPECT_LE(sm90::fwd_smem_bytes(bucket, t.block_m, t.block_n, 1), sm90::kMaxSmemBytes);
        EXPECT_LE(
            sm90::fwd_smem_bytes(bucket, t.block_m, t.block_n, 1, sm90::kFp8ValueStagingSlots),
            sm90::kMaxSmemBytes);
      }
    }
  }
  // With V transposed by the pass the kernels have no staging slots, and O staged whole.
  EXPECT_EQ(sm90::epilogue_panels(128, 128, 192, 1), 2);
  EXPECT_EQ(sm90::epilogue_panels(256, 128, 128, 1), 4);
  // The wide rows where the 16-bit forward's wide tile has the FP8 long width: D = 64 only.
  EXPECT_TRUE(sm90::fp8_tile_exists(64, 192, 128));
  EXPECT_FALSE(sm90::fp8_tile_exists(64, 192, 224));
  EXPECT_FALSE(sm90::fp8_tile_exists(128, 192, 192));
  EXPECT_FALSE(sm90::fp8_tile_exists(256, 128, 256));
  EXPECT_EQ(sm90::fp8_value_panel_keys(192), 64);
  EXPECT_EQ(sm90::fp8_value_panel_keys(224), 32);
  EXPECT_EQ(sm90::swizzle_bytes(64, 1), 64);
  EXPECT_EQ(sm90::swizzle_bytes(128, 1), 128);
  EXPECT_EQ(sm90::swizzle_bytes(256, 1), 128);
}

TEST(Sm90Fp8Tile, KeyWidths) {
  // D = 64: 224 keys where they make one block of more than 128 keys (ViT-B/16's 197).
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 77), 128);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 128), 128);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 129), 224);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 197), 224);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 224), 224);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 225), 128);
  EXPECT_EQ(sm90::fp8_fwd_block_n(64, 4096), 128);
  // D = 128: the width that pads less by key_blocks_cost.
  EXPECT_EQ(sm90::fp8_fwd_block_n(128, 1024), 128);
  EXPECT_EQ(sm90::fp8_fwd_block_n(128, 255), 128);
  EXPECT_EQ(sm90::fp8_fwd_block_n(128, 257), 192);
  EXPECT_EQ(sm90::fp8_fwd_block_n(128, 4096), 192);
  EXPECT_EQ(sm90::fp8_fwd_block_n(128, 16384), 192);
  EXPECT_EQ(sm90::fp8_fwd_block_n(256, 197), 128);
}

TEST(Sm90Fp8Tile, WhereTheKernelTransposesValues) {
  // One key block a tile: always; else up to 8 query tiles a V block (4 at D = 256).
  EXPECT_TRUE(sm90::fp8_values_in_kernel(64, 128, 77, 32, 1));
  EXPECT_TRUE(sm90::fp8_values_in_kernel(64, 224, 197, 2, 1));
  EXPECT_TRUE(sm90::fp8_values_in_kernel(128, 128, 1024, 8, 1));
  EXPECT_FALSE(sm90::fp8_values_in_kernel(128, 128, 1024, 8, 2));
  EXPECT_FALSE(sm90::fp8_values_in_kernel(128, 192, 4096, 32, 1));
  EXPECT_TRUE(sm90::fp8_values_in_kernel(256, 128, 256, 2, 1));
  EXPECT_FALSE(sm90::fp8_values_in_kernel(256, 128, 1024, 8, 1));
  sm90::Fp8Values v;
  v.heads = 65535;
  v.seqs = 65535;
  v.keys = 1000;
  EXPECT_TRUE(sm90::fp8_values_pass_fits(v));
  v.heads = 65536;
  EXPECT_FALSE(sm90::fp8_values_pass_fits(v));
}

class GpuSm90Fp8 : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(CudaKernel::sm90);
    if (!why.empty()) GTEST_SKIP() << why;
  }
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

/// Runs `check` with V transposed in the kernel, then by the pass before it (fp8_values.h).
template <typename Check>
void in_both_values_modes(const Check& check) {
  for (const char* values : {"kernel", "pass"}) {
    SCOPED_TRACE(std::string("V transposed in the ") + values);
    const ScopedEnv mode("FLASHVISION_SM90_FP8_VALUES", values);
    check();
  }
}

TEST_F(GpuSm90Fp8, EveryTileAndPaddedHeadDims) {
  in_both_values_modes([] {
    for (const char* rows : {"128", "192"}) {
      SCOPED_TRACE(std::string(rows) + " rows");
      const ScopedEnv forced("FLASHVISION_SM90_FWD_ROWS", rows);
      for (const int64_t d : {16, 48, 64, 80, 96, 128, 192, 256}) {
        check_forward(target(), dense_case(DType::f8e4m3, 300, 1000, d));
      }
    }
  });
}

TEST_F(GpuSm90Fp8, PartialGroupsAndBlocksOfKeys) {
  in_both_values_modes([] {
    for (const int64_t nk : {1, 31, 33, 129, 200, 255, 2049}) {
      check_forward(target(), dense_case(DType::f8e4m3, 130, nk, 128));
    }
  });
}

TEST_F(GpuSm90Fp8, ShortWidthAtHeadDim64) {
  // 224-key blocks: one a tile (the cross-tile pipeline) from 129 keys, ViT-B/16's 197 among them;
  // V in panels of 32 keys.
  in_both_values_modes([] {
    for (const int64_t nk : {129, 197, 224}) {
      AttentionCase c = dense_case(DType::f8e4m3, 197, nk, 64);
      c.batch = 3;
      c.heads = c.heads_kv = 12;
      check_forward(target(), c);
    }
    const ScopedEnv off("FLASHVISION_SM90_FWD_CROSS_TILE", "0");
    check_forward(target(), dense_case(DType::f8e4m3, 197, 197, 48));
  });
}

TEST_F(GpuSm90Fp8, OneBlockTilesCrossTile) {
  // SD 1.5-like cross-attention to 77 text tokens: every tile one key block, several a CTA.
  AttentionCase c = dense_case(DType::f8e4m3, 4096, 77, 64);
  c.heads = c.heads_kv = 16;
  check_forward(target(), c);
  {
    const ScopedEnv off("FLASHVISION_SM90_FWD_CROSS_TILE", "0");
    check_forward(target(), c);
  }
}

TEST_F(GpuSm90Fp8, SplitLastWave) {
  // Four tiles of 32 key blocks on a GPU of many SMs: the last wave splits over the keys.
  AttentionCase c = dense_case(DType::f8e4m3, 256, 4096, 128);
  c.batch = 1;
  check_forward(target(), c);
  const ScopedEnv split("FLASHVISION_SM90_FWD_SPLIT", "3");
  check_forward(target(), c);
}

TEST_F(GpuSm90Fp8, GroupedHeadsLayoutsCausalDescales) {
  in_both_values_modes([] {
    AttentionCase c = dense_case(DType::f8e4m3, 333, 517, 128);
    c.heads = 12;
    c.heads_kv = 3;
    c.layout = Layout::torch;
    c.row_pad = 16;
    c.descale_q = 0.37f;
    c.descale_k = 1.9f;
    c.descale_v = 0.25f;
    check_forward(target(), c);
    c.causal = true;
    c.layout = Layout::flash;
    check_forward(target(), c);
    c.with_lse = false;
    c.head_dim = 256;
    check_forward(target(), c);
  });
}

TEST_F(GpuSm90Fp8, ScoresThatMoveTheMax) {
  // The ramps' keys saturate e4m3 at 448 over most of a row, so that its scores are ~450 (before
  // the scale) apart by a few units: the tensor cores' FP8 products sum with fewer bits than
  // float32 (up to 0.017 in the lse seen on the H200, 5 % of O's largest value where a few keys
  // dominate), whose error the 16-bit tolerance would not hold.
  CheckOptions options;
  options.tolerance = Tolerance{1e-3, 1e-1};
  for (const int64_t d : {64, 128, 256}) {
    for (const double ramp : {48.0, 2000.0}) {
      for (const bool rising : {true, false}) {
        SCOPED_TRACE(std::string(rising ? "rising" : "falling") + " by " + std::to_string(ramp));
        options.shape_inputs = [rising, ramp](RefProblem& p) { ramp_scores(p, rising, ramp); };
        check_forward(target(), dense_case(DType::f8e4m3, 200, 1000, d), options);
      }
    }
  }
}

TEST_F(GpuSm90Fp8, TheAutomaticBackendTakesIt) {
  const AttentionCase c = dense_case(DType::f8e4m3, 64, 64, 64);
  check_forward(cuda_target(CudaKernel::sm90), c);
  Target automatic = cuda_target(CudaKernel::sm90);
  automatic.backend = Backend::automatic;
  check_forward(automatic, c);
}

}  // namespace
}  // namespace flashvision::testing
