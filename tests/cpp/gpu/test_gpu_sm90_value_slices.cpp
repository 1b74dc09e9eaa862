// The sm90 forward's sliced tile (tile_config.h's sliced_value_columns): bucket 160's half tile in
// two tiles per query block, each computing the block's scores and softmax and P V for 96 of V's
// columns (the second slice's last 32-column panel lies past every head dim of the bucket and
// loads as zeros). The host takes it where all the slices fit one wave (fwd_value_sliced). The
// choice is checked on its own; the GPU cases force half tiles (FLASHVISION_SM90_FWD_ROWS=64) with
// the slices on and off (FLASHVISION_SM90_FWD_SLICES) against the float64 reference, O and LSE
// (which only the first slice writes): padded head dims, partial query tiles, several key blocks,
// causal masks, grouped heads, layouts, varlen batches, rising scores, split tiles and more tiles
// than SMs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kSlicesVar = "FLASHVISION_SM90_FWD_SLICES";
constexpr int kH200Sms = 132;

static_assert(sm90::sliced_value_columns(160, sm90::kHalfBlockM) == 96 &&
              sm90::value_slices(160, 96) == 2 && sm90::value_slices(160) == 1);
// Whole panels of bucket 160's 64-byte swizzle (32 columns).
static_assert(96 % (sm90::swizzle_bytes(160) / 2) == 0);
// Only that tile has slices of its own; D = 512 keeps its two 256-column halves.
static_assert(sm90::sliced_value_columns(160, sm90::kNarrowBlockM) == 0 &&
              sm90::sliced_value_columns(128, sm90::kHalfBlockM) == 0 &&
              sm90::sliced_value_columns(80, sm90::kHalfBlockM) == 0 &&
              sm90::sliced_value_columns(64, sm90::kHalfBlockM) == 0 &&
              sm90::value_slices(512) == 2);
static_assert(sm90::fwd_smem_bytes(160, sm90::kHalfBlockM, 128, 2, 0, 96) <
              sm90::fwd_smem_bytes(160, sm90::kHalfBlockM, 128));

/// Half tiles of SD 1.5's 16 x 16 level (256 rows, 8 heads) at `batch`.
constexpr long long sd15_half_tiles(long long batch) {
  return (256 / sm90::kHalfBlockM) * batch * 8;
}

TEST(Sm90ValueSliceChoice, SlicesThatFitAWaveTakeThem) {
  // SD 1.5's 16 x 16 level at batch 1 and 2: 32 and 64 half tiles, 64 and 128 slices.
  EXPECT_TRUE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, sd15_half_tiles(1), kH200Sms));
  EXPECT_TRUE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, sd15_half_tiles(2), kH200Sms));
  // Exactly one wave.
  EXPECT_TRUE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, kH200Sms / 2, kH200Sms));
}

TEST(Sm90ValueSliceChoice, SlicesPastAWaveOrNoSlicesKeepTheTilesWhole) {
  // At batch 4 the 128 half tiles fill a wave whole; sliced they would need two.
  EXPECT_FALSE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, sd15_half_tiles(4), kH200Sms));
  EXPECT_FALSE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, kH200Sms / 2 + 1, kH200Sms));
  // Tiles without slices.
  EXPECT_FALSE(sm90::fwd_value_sliced(160, sm90::kNarrowBlockM, 8, kH200Sms));
  EXPECT_FALSE(sm90::fwd_value_sliced(128, sm90::kHalfBlockM, 8, kH200Sms));
  // No device count (0): one SM.
  EXPECT_FALSE(sm90::fwd_value_sliced(160, sm90::kHalfBlockM, 1, 0));
}

class GpuSm90ValueSlices : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

constexpr const char* kRowsVar = "FLASHVISION_SM90_FWD_ROWS";

TEST_P(GpuSm90ValueSlices, SlicedAndWholeHalfTilesMatchTheReference) {
  ScopedEnv rows(kRowsVar, "64");
  // Head dims of bucket 160 whose second slice's columns end inside a panel (136, 144) or on one
  // (160); keys of one block, of several with a partial last one; query tiles full and partial.
  for (const char* slices : {"1", "0"}) {
    ScopedEnv env(kSlicesVar, slices);
    for (const int64_t dim : {136, 144, 160}) {
      for (const int64_t nk : {int64_t{1}, int64_t{100}, int64_t{256}, int64_t{900}}) {
        for (const int64_t nq : {int64_t{64}, int64_t{130}}) {
          SCOPED_TRACE(std::string(kSlicesVar) + "=" + slices);
          check_forward(target(), dense_case(dtype(), nq, nk, dim));
        }
      }
    }
  }
}

TEST_P(GpuSm90ValueSlices, CausalGroupedLayoutsAndVarlen) {
  ScopedEnv rows(kRowsVar, "64");
  ScopedEnv env(kSlicesVar, "1");
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{150, 700}, {700, 150}}) {
    AttentionCase c = dense_case(dtype(), nq, nk, 160);
    c.causal = true;
    check_forward(target(), c);
  }
  AttentionCase gqa = dense_case(dtype(), 200, 600, 144);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  gqa.layout = Layout::torch;
  check_forward(target(), gqa);
  AttentionCase no_lse = dense_case(dtype(), 130, 300, 160);
  no_lse.with_lse = false;
  check_forward(target(), no_lse);
  AttentionCase varlen = ragged_varlen_case(dtype(), 160);
  for (const bool causal : {false, true}) {
    varlen.causal = causal;
    check_forward(target(), varlen);
  }
}

TEST_P(GpuSm90ValueSlices, ScoresRisingFarOverKeyBlocks) {
  ScopedEnv rows(kRowsVar, "64");
  ScopedEnv env(kSlicesVar, "1");
  check_forward_with_ramps(target(), dense_case(dtype(), 130, 900, 160));
}

TEST_P(GpuSm90ValueSlices, SplitTilesCombineEachSlice) {
  ScopedEnv rows(kRowsVar, "64");
  // The combine writes each part's slice of columns (the second one's up to the head dim).
  ScopedEnv env(kSlicesVar, "1");
  for (const char* parts : {"2", "3"}) {
    ScopedEnv split("FLASHVISION_SM90_FWD_SPLIT", parts);
    SCOPED_TRACE(std::string("FLASHVISION_SM90_FWD_SPLIT=") + parts);
    check_forward(target(), dense_case(dtype(), 130, 1000, 144));
    check_forward(target(), dense_case(dtype(), 64, 700, 160));
  }
}

TEST_P(GpuSm90ValueSlices, SeveralTilesPerCta) {
  ScopedEnv rows(kRowsVar, "64");
  // 4 x 40 (sequence, head) pairs x 5 query blocks x 2 slices: every persistent CTA walks several
  // tiles, slices of the same query block and of others.
  ScopedEnv env(kSlicesVar, "1");
  AttentionCase c = dense_case(dtype(), 300, 400, 160);
  c.batch = 4;
  c.heads = c.heads_kv = 40;
  check_forward(target(), c);
}

TEST_P(GpuSm90ValueSlices, ChosenWithoutBeingAsked) {
  // SD 1.5's 16 x 16 level as the host tiles it: on the H200's 132 SMs, sliced half tiles at
  // batch 2 and whole ones at batch 4.
  AttentionCase sd15 = dense_case(dtype(), 256, 256, 160);
  sd15.heads = sd15.heads_kv = 8;
  sd15.layout = Layout::torch;
  check_forward(target(), sd15);
  sd15.batch = 4;
  check_forward(target(), sd15);
}

TEST_P(GpuSm90ValueSlices, ABadValueIsRejectedByName) {
  ScopedEnv rows(kRowsVar, "64");
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 256, 160), kSlicesVar, "2");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90ValueSlices, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
