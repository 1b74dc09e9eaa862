// The sm80 backward's last-wave split (src/cuda/sm80/bwd_split.h), host-only, no GPU needed: which
// tiles it takes, the part counts a request forces, the partial budget, and the model's choice on
// the BENCH.md cases on an H200 (132 SMs, one backward CTA each, the tile variants Hopper picks).
#include <gtest/gtest.h>

#include "cuda/sm80/bwd_split.h"
#include "cuda/sm80/tile_config.h"

namespace flashvision::testing {
namespace {

namespace sm80 = flashvision::detail::sm80;

constexpr int kH200Sms = 132;

/// The geometry of a dense non-causal backward on an H200: B x H heads (as many kv heads) of
/// Nq = Nk = n in head-dim bucket `bucket`, tile variant `variant`.
sm80::BwdTailGeometry geometry(int64_t batch_heads, int64_t n, int bucket, int variant) {
  const sm80::BwdTile tile = sm80::bwd_tile(bucket, variant);
  sm80::BwdTailGeometry g;
  g.tiles = (n + tile.block_n - 1) / tile.block_n * batch_heads;
  g.slots = int64_t{sm80::kBwdCtasPerSm} * kH200Sms;
  g.query_blocks = (n + tile.block_m - 1) / tile.block_m;
  g.block_m = tile.block_m;
  g.block_n = tile.block_n;
  g.head_dim = bucket;
  g.costs = sm80::kBwdTailCosts;
  return g;
}

bool is_none(const sm80::BwdTailGeometry& g, const sm80::BwdTailSplit& s) {
  return s.parts == 1 && s.tile0 == g.tiles;
}

TEST(BwdTailSplit, LastWaveIsTheRemainderOrAWholeWave) {
  EXPECT_EQ(sm80::bwd_last_wave_tiles(geometry(4 * 32, 4096, 64, 2)), 4);    // 4096 = 31 x 132 + 4
  EXPECT_EQ(sm80::bwd_last_wave_tiles(geometry(2 * 132, 128, 64, 2)), 132);  // two full waves
  EXPECT_EQ(sm80::bwd_last_wave_tiles(geometry(10, 128, 64, 2)), 10);        // under one wave
  EXPECT_EQ(sm80::bwd_last_wave_tiles(geometry(0, 128, 64, 2)), 0);
}

TEST(BwdTailSplit, ForcedPartsSplitTheLastWave) {
  const sm80::BwdTailGeometry g = geometry(4 * 32, 4096, 64, 2);
  const sm80::BwdTailSplit s = sm80::bwd_tail_split(g, 7);
  EXPECT_EQ(s.tile0, 4092);
  EXPECT_EQ(s.parts, 7);
  // More parts than query blocks: some parts walk none (and write zero partials).
  const sm80::BwdTailSplit many = sm80::bwd_tail_split(geometry(40, 200, 64, 2), 5);
  EXPECT_EQ(many.tile0, 0);
  EXPECT_EQ(many.parts, 5);
  EXPECT_TRUE(is_none(g, sm80::bwd_tail_split(g, sm80::kBwdTailOff)));
}

TEST(BwdTailSplit, PartialsStayWithinBudget) {
  // 132 tiles of 64 keys at D = 256 in 128 parts: 2 x 132 x 128 x 64 x 256 x 4 = 2.1 GB.
  const sm80::BwdTailGeometry g = geometry(132 / 2, 128, 256, 1);
  EXPECT_TRUE(is_none(g, sm80::bwd_tail_split(g, 128)));
  EXPECT_EQ(sm80::bwd_tail_split(g, 3).parts, 3);
  const sm80::BwdTailSplit best = sm80::bwd_tail_split(g, sm80::kBwdTailOn);
  EXPECT_LE(sm80::bwd_tail_partial_bytes(g, best), sm80::kBwdPartialBudgetBytes);
}

TEST(BwdTailSplit, TheD64SweepSplitsItsFourTailTiles) {
  // 4096 tiles of 32 (128 query blocks at N = 16384): 31 waves and 4 tiles. 32 parts are one round
  // of 128 CTAs of one (four) query blocks.
  for (const int64_t n : {4096, 16384}) {
    const sm80::BwdTailGeometry g = geometry(16384 / n * 32, n, 64, 2);
    const sm80::BwdTailSplit s = sm80::bwd_tail_split(g, sm80::kBwdTailAuto);
    EXPECT_EQ(s.tile0, 4092) << n;
    EXPECT_EQ(s.parts, 32) << n;
    // About a 32nd of the backward: the tail's wave becomes a few steps.
    const double gain = sm80::bwd_tail_cost(g, {g.tiles, 1}) / sm80::bwd_tail_cost(g, s);
    EXPECT_GT(gain, 1.025) << n;
    EXPECT_LT(gain, 1.032) << n;
  }
}

TEST(BwdTailSplit, Flux1024SplitsItsHalfWave) {
  // 36 key blocks x 24 heads = 864 tiles, 6.55 waves: the 72 tail tiles of 72 query blocks in 9
  // parts are 648 CTAs of 8 blocks, 5 rounds of 8.5 steps against 72.5.
  const sm80::BwdTailGeometry g = geometry(24, 4608, 128, 1);
  const sm80::BwdTailSplit s = sm80::bwd_tail_split(g, sm80::kBwdTailAuto);
  EXPECT_EQ(s.tile0, 792);
  EXPECT_EQ(s.parts, 9);
}

TEST(BwdTailSplit, AutoSkipsSplitsThatDoNotPay) {
  // ViT-B/16: two query blocks, the tail's steps cannot shrink below one plus the partials.
  EXPECT_TRUE(is_none(geometry(256 * 12, 197, 64, 2),
                      sm80::bwd_tail_split(geometry(256 * 12, 197, 64, 2), sm80::kBwdTailAuto)));
  // SDXL self-attention at 128 x 128: 640 tiles, a tail of 112 (85 % of a wave).
  const sm80::BwdTailGeometry sdxl = geometry(2 * 10, 4096, 64, 2);
  EXPECT_TRUE(is_none(sdxl, sm80::bwd_tail_split(sdxl, sm80::kBwdTailAuto)));
  // ... though the model's best split exists when asked for.
  EXPECT_GT(sm80::bwd_tail_split(sdxl, sm80::kBwdTailOn).parts, 1);
  // Full waves only.
  const sm80::BwdTailGeometry full = geometry(2 * 132, 4096, 64, 2);
  EXPECT_TRUE(is_none(full, sm80::bwd_tail_split(full, sm80::kBwdTailAuto)));
}

TEST(BwdTailSplit, TheModelCountsWavesRoundsAndPartials) {
  const sm80::BwdTailGeometry g = geometry(4 * 32, 4096, 64, 2);
  // Unsplit: 32 waves of 32 steps plus the overhead.
  EXPECT_DOUBLE_EQ(sm80::bwd_tail_cost(g, {g.tiles, 1}), 32 * 32.5);
  // 4 tiles x 32 parts: 31 waves, one round of one step, the launches and the partials' traffic.
  const double step_us = 10.0 * 128 * 128 * 64 / sm80::kBwdTailCosts.sm_flops_per_us;
  const double bytes = 2.0 * 128 * 64 * (4.0 * 128 + (4.0 * 32 + 2.0) * 4);
  EXPECT_DOUBLE_EQ(
      sm80::bwd_tail_cost(g, {4092, 32}),
      31 * 32.5 + 1.5 +
          (sm80::kBwdTailCosts.launch_us + bytes / sm80::kBwdTailCosts.bytes_per_us) / step_us);
}

}  // namespace
}  // namespace flashvision::testing
