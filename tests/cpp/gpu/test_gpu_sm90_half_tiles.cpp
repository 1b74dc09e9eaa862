// The half tiles of the sm90 forward (src/cuda/sm90/tile_config.h): 64 query rows of one consumer
// warpgroup, at the long width of buckets 64, 80, 128 and 160 and the short width of 64 and 80,
// which the host takes where all of a problem's half tiles fit one wave of the SMs. The choice is
// checked on its own; the GPU cases force the half tiles with FLASHVISION_SM90_FWD_ROWS=64 and
// run them against the float64 reference: partial query tiles, several key blocks, causal masks,
// grouped heads, layouts, varlen batches, rising scores and several tiles per CTA.
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

constexpr const char* kRowsVar = "FLASHVISION_SM90_FWD_ROWS";
constexpr int kH200Sms = 132;

static_assert(sm90::half_tile_exists(64, sm90::fwd_tile(64).block_n) &&
              sm90::half_tile_exists(64, sm90::short_block_n(64)) &&
              sm90::half_tile_exists(80, sm90::short_block_n(80)) &&
              sm90::half_tile_exists(128, sm90::fwd_tile(128).block_n) &&
              sm90::half_tile_exists(160, sm90::fwd_tile(160).block_n));
static_assert(!sm90::half_tile_exists(64, sm90::text_block_n(64)), "no half text tile");
static_assert(!sm90::half_tile_exists(128, sm90::second_block_n(128)), "no half 192-key tile");
static_assert(!sm90::half_tile_exists(48, sm90::fwd_tile(48).block_n) &&
              !sm90::half_tile_exists(256, sm90::fwd_tile(256).block_n));
static_assert(sm90::fwd_tile_exists(160, sm90::kHalfBlockM, 128));
static_assert(!sm90::fwd_tile_exists(160, sm90::kHalfBlockM, 96));
static_assert(sm90::fwd_tile(160, 64, 128).consumers() == 1 &&
              sm90::fwd_threads(sm90::fwd_tile(160, 64, 128)) == 256 &&
              sm90::consumer_registers(sm90::fwd_tile(160, 64, 128)) == 240);
static_assert(!sm90::fwd_cross_tile_compiled(64, sm90::kHalfBlockM, sm90::half_long_block_n(64)) &&
              !sm90::fwd_cross_tile_compiled(64, sm90::kHalfBlockM, sm90::half_short_block_n(64)));

TEST(Sm90HalfTileChoice, OneWaveOfHalfTilesTakesThem) {
  // SD 1.5's 16 x 16 level (D = 160, 2 x 8 heads of 256 rows): 64 half tiles for 132 SMs.
  EXPECT_TRUE(sm90::fwd_half_rows(160, 128, 256, 2 * 8, kH200Sms));
  // ViT-B/16 at batch 1 (197 rows in 4 half tiles, 12 heads) at the short width.
  EXPECT_TRUE(sm90::fwd_half_rows(64, sm90::short_block_n(64), 197, 12, kH200Sms));
  // Exactly one wave.
  EXPECT_TRUE(sm90::fwd_half_rows(128, 176, 64 * 33, 4, kH200Sms));
}

TEST(Sm90HalfTileChoice, MoreThanAWaveOrNoHalfTileKeepsTheOthers) {
  EXPECT_FALSE(sm90::fwd_half_rows(128, 176, 64 * 33 + 1, 4, kH200Sms));
  // SD 1.5's 32 x 32 level (D = 80, 1024 rows, 16 heads): 128 tiles of 128 rows fill the SMs.
  EXPECT_FALSE(sm90::fwd_half_rows(80, 128, 1024, 2 * 8, kH200Sms));
  // The benchmark's ViTs and the text width.
  EXPECT_FALSE(sm90::fwd_half_rows(64, sm90::short_block_n(64), 197, 256 * 12, kH200Sms));
  EXPECT_FALSE(sm90::fwd_half_rows(64, sm90::text_block_n(64), 256, 2, kH200Sms));
  // Buckets and widths without a half tile.
  EXPECT_FALSE(sm90::fwd_half_rows(256, 80, 256, 2, kH200Sms));
  EXPECT_FALSE(sm90::fwd_half_rows(128, 192, 256, 2, kH200Sms));
  // No device count (0): one SM.
  EXPECT_FALSE(sm90::fwd_half_rows(160, 128, 256, 2, 0));
}

class GpuSm90HalfTiles : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

TEST_P(GpuSm90HalfTiles, EveryHalfTileMatchesTheReference) {
  ScopedEnv env(kRowsVar, "64");
  // Each bucket with half tiles, padded head dims among them; keys of one block, of several with
  // a partial last one, and (at 64 and 80) at the short width; query tiles full and partial.
  for (const int64_t dim : {56, 64, 72, 80, 120, 128, 144, 160}) {
    for (const int64_t nk : {int64_t{1}, int64_t{100}, int64_t{197}, int64_t{577}, int64_t{900}}) {
      for (const int64_t nq : {int64_t{64}, int64_t{130}}) {
        AttentionCase c = dense_case(dtype(), nq, nk, dim);
        SCOPED_TRACE("block_n " +
                     std::to_string(sm90::fwd_block_n(sm90::head_dim_bucket(dim), nk)));
        check_forward(target(), c);
      }
    }
  }
}

TEST_P(GpuSm90HalfTiles, ChosenWithoutBeingAsked) {
  // SD 1.5's 16 x 16 level and ViT-B/16 at batch 1 take half tiles by themselves.
  ASSERT_TRUE(sm90::fwd_half_rows(160, 128, 256, 2 * 8, kH200Sms));
  AttentionCase sd15 = dense_case(dtype(), 256, 256, 160);
  sd15.heads = sd15.heads_kv = 8;
  sd15.layout = Layout::torch;
  check_forward(target(), sd15);
  AttentionCase vit = dense_case(dtype(), 197, 197, 64);
  vit.batch = 1;
  vit.heads = vit.heads_kv = 12;
  check_forward(target(), vit);
}

TEST_P(GpuSm90HalfTiles, CausalGroupedLayoutsAndVarlen) {
  ScopedEnv env(kRowsVar, "64");
  // Causal, aligned bottom-right: more keys than queries, then more queries than keys (the first
  // rows see nothing, whole tiles may see nothing).
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{150, 700}, {700, 150}}) {
    for (const int64_t dim : {64, 128, 160}) {
      AttentionCase c = dense_case(dtype(), nq, nk, dim);
      c.causal = true;
      check_forward(target(), c);
    }
  }
  AttentionCase gqa = dense_case(dtype(), 200, 600, 128);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  gqa.layout = Layout::torch;
  check_forward(target(), gqa);
  AttentionCase mqa = dense_case(dtype(), 257, 257, 80);
  mqa.heads = 4;
  mqa.heads_kv = 1;
  mqa.causal = true;
  check_forward(target(), mqa);
  for (const int64_t dim : {64, 160}) {
    AttentionCase varlen = ragged_varlen_case(dtype(), dim);
    for (const bool causal : {false, true}) {
      varlen.causal = causal;
      check_forward(target(), varlen);
    }
  }
}

TEST_P(GpuSm90HalfTiles, ScoresRisingFarOverKeyBlocks) {
  // The softmax's path that moves a row's max (stale_max_softmax.cuh) with one consumer, which
  // rescales O during S's GEMM as two consumers do: the long widths and the short ones.
  ScopedEnv env(kRowsVar, "64");
  for (const auto& [nk, dim] : {std::pair<int64_t, int64_t>{900, 64},
                                {577, 64},
                                {257, 80},
                                {900, 72},
                                {900, 128},
                                {900, 160}}) {
    check_forward_with_ramps(target(), dense_case(dtype(), 130, nk, dim));
  }
}

TEST_P(GpuSm90HalfTiles, SeveralTilesPerCta) {
  // 4 x 40 (sequence, head) pairs x 5 query blocks: more tiles than SMs, so each persistent CTA
  // walks several, and the Q and K/V rings go round across tiles.
  ScopedEnv env(kRowsVar, "64");
  for (const int64_t dim : {80, 160}) {
    AttentionCase c = dense_case(dtype(), 300, 400, dim);
    c.batch = 4;
    c.heads = c.heads_kv = 40;
    check_forward(target(), c);
  }
}

TEST_P(GpuSm90HalfTiles, ABadRowCountIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 900, 64), kRowsVar, "32");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90HalfTiles, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
