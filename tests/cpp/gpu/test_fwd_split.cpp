// The split of a forward's last wave over the keys (src/cuda/common/fwd_split.h), host-only, no
// GPU needed: which tiles it applies to, that its parts cover a tile's key blocks whole and none
// is empty, and the model's choice on the image cases of the H200 (132 SMs) for the sm90 forward
// (one persistent CTA per SM) and the sm80 forward (two CTAs per SM at D <= 128 there).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cuda/common/fwd_split.h"
#include "cuda/sm80/tile_config.h"
#include "cuda/sm90/tile_config.h"

namespace flashvision::testing {
namespace {

namespace detail = flashvision::detail;
namespace sm80 = flashvision::detail::sm80;
namespace sm90 = flashvision::detail::sm90;

constexpr int kH200Sms = 132;

/// The geometry of a dense problem of the sm90 forward whose tiles have `block_m` rows on an H200.
detail::FwdSplitGeometry geometry(long long tiles, int key_blocks, int block_m, int block_n,
                                  int bucket) {
  detail::FwdSplitGeometry g;
  g.tiles = tiles;
  g.ctas = kH200Sms;
  g.key_blocks = key_blocks;
  g.block_m = block_m;
  g.block_n = block_n;
  g.head_dim = bucket;
  g.value_cols = sm90::value_columns(bucket);
  g.costs = detail::kSm90FwdSplitCosts;
  return g;
}

/// The geometry of a dense problem of the sm80 forward on an H200: `ctas_per_sm` CTAs of the
/// bucket's tile variant `variant` on each SM, tiles of the shape's query blocks.
detail::FwdSplitGeometry sm80_geometry(long long batch_heads, long long seqlen_q,
                                       long long seqlen_k, int bucket, int variant,
                                       int ctas_per_sm = 2) {
  const sm80::FwdTile tile = sm80::fwd_tile(bucket, variant);
  detail::FwdSplitGeometry g;
  g.tiles = (seqlen_q + tile.block_m - 1) / tile.block_m * batch_heads;
  g.ctas = kH200Sms * ctas_per_sm;
  g.key_blocks = static_cast<int>((seqlen_k + tile.block_n - 1) / tile.block_n);
  g.block_m = tile.block_m;
  g.block_n = tile.block_n;
  g.head_dim = bucket;
  g.value_cols = bucket;
  g.costs = detail::kSm80FwdSplitCosts;
  g.ctas_per_sm = ctas_per_sm;
  return g;
}

TEST(Sm90FwdSplit, TailIsThePartialLastWave) {
  EXPECT_EQ(detail::fwd_tail_tiles(geometry(440, 32, 192, 128, 64)), 44);
  EXPECT_EQ(detail::fwd_tail_tiles(geometry(264, 32, 192, 128, 64)), 0);
  EXPECT_EQ(detail::fwd_tail_tiles(geometry(8, 8, 128, 128, 64)), 8);  // less than a wave
  // Full waves have nothing to split, whatever is asked.
  for (const int request : {detail::kFwdSplitAuto, detail::kFwdSplitOn, 3}) {
    EXPECT_EQ(detail::fwd_tail_split(geometry(264, 32, 192, 128, 64), request).parts, 1);
  }
}

TEST(FwdSplit, PartsCoverTheKeyBlocksWholeAndNoneIsEmpty) {
  for (int blocks = 1; blocks <= 64; ++blocks) {
    for (int parts = 1; parts <= detail::kFwdMaxSplitParts; ++parts) {
      const detail::FwdSplit s = detail::fwd_split_of(blocks, parts);
      SCOPED_TRACE(std::to_string(blocks) + " blocks in " + std::to_string(parts) + " parts");
      EXPECT_GE(s.parts, 1);
      EXPECT_LE(s.parts, std::min(parts, blocks));
      EXPECT_GE(s.blocks_per_part, 1);
      // The last part (the kernel's min(n_blocks, n_block0 + per) - n_block0) has keys.
      EXPECT_LT((s.parts - 1) * s.blocks_per_part, blocks);
      EXPECT_GE(s.parts * s.blocks_per_part, blocks);
    }
  }
  EXPECT_EQ(detail::fwd_split_of(32, 3).blocks_per_part, 11);  // 11 + 11 + 10
  EXPECT_EQ(detail::fwd_split_of(8, 5).parts, 4);              // 2 + 2 + 2 + 2
  EXPECT_EQ(detail::fwd_split_of(1, 4).parts, 1);              // one block: nothing to split
}

TEST(Sm90FwdSplit, ImageCasesOnTheH200) {
  // sdxl-self-128: 22 x 20 wide tiles, 32 key blocks; 44 in the fourth wave, three parts fill
  // the 132 SMs.
  const detail::FwdSplitGeometry sdxl = geometry(440, 32, 192, 128, 64);
  const detail::FwdSplit s = detail::fwd_tail_split(sdxl, detail::kFwdSplitAuto);
  EXPECT_EQ(s.parts, 3);
  EXPECT_EQ(s.blocks_per_part, 11);
  EXPECT_LT(detail::fwd_split_cost(sdxl, s), 0.93 * detail::fwd_split_cost(sdxl, {1, 32}));
  // flux-1024 (36 x 24 tiles, 24 blocks of 192 keys) gains too little; sd15-self-64 (22 x 16 wide
  // tiles, D = 48) ran 6 % slower split on the H200.
  EXPECT_EQ(detail::fwd_tail_split(geometry(864, 24, 128, 192, 128), detail::kFwdSplitAuto).parts,
            1);
  const detail::FwdSplitGeometry sd15 = geometry(352, 32, 192, 128, 48);
  EXPECT_EQ(detail::fwd_tail_split(sd15, detail::kFwdSplitAuto).parts, 1);
  EXPECT_GT(detail::fwd_split_cost(sd15, detail::fwd_split_of(32, 3)),
            detail::fwd_split_cost(sd15, {1, 32}));
  // dit-xl2-512: 11 blocks of 96 keys; its 84 tail tiles in parts would save less than the
  // combine costs.
  const detail::FwdSplitGeometry dit = geometry(1536, 11, 192, 96, 80);
  EXPECT_EQ(detail::fwd_tail_split(dit, detail::kFwdSplitAuto).parts, 1);
  EXPECT_GT(detail::fwd_tail_split(dit, detail::kFwdSplitOn).parts, 1);  // forced, it splits
  // vit-b16-224: one 208-key block per tile, nothing to split.
  EXPECT_EQ(detail::fwd_tail_split(geometry(6144, 1, 128, 208, 64), detail::kFwdSplitOn).parts, 1);
  // vae-mid-512: 32 query blocks of one head, a tile per 256-column slice of V and O, 128 blocks
  // of 32 keys: 64 tiles leave 68 SMs idle; two parts of 64 blocks fill 128 of them in one round
  // (the H200 ran it 114 -> 100 us against four parts of two launches, and 318 us unsplit).
  EXPECT_EQ(sm90::value_slices(512), 2);
  EXPECT_EQ(sm90::value_slices(256), 1);
  const detail::FwdSplitGeometry vae =
      geometry(32 * sm90::value_slices(512), 128, 128, sm90::fwd_tile(512).block_n, 512);
  const detail::FwdSplit v = detail::fwd_tail_split(vae, detail::kFwdSplitAuto);
  EXPECT_EQ(v.parts, 2);
  EXPECT_EQ(v.blocks_per_part, 64);
  EXPECT_LT(detail::fwd_split_cost(vae, v), 0.6 * detail::fwd_split_cost(vae, {1, 128}));
}

TEST(Sm90FwdSplit, RequestsOffOnAndCounts) {
  const detail::FwdSplitGeometry g = geometry(440, 32, 192, 128, 64);
  EXPECT_EQ(detail::fwd_tail_split(g, detail::kFwdSplitOff).parts, 1);
  for (int parts = 2; parts <= detail::kFwdMaxSplitParts; ++parts) {
    const detail::FwdSplit s = detail::fwd_tail_split(g, parts);
    EXPECT_EQ(s.parts, detail::fwd_split_of(32, parts).parts);
    EXPECT_EQ(s.blocks_per_part, detail::fwd_split_of(32, parts).blocks_per_part);
  }
  // The GPU tests' small shapes (test_gpu_sm90_fwd_split.cpp): 8 tiles of 8 key blocks, all in
  // the one partial wave, split as asked.
  EXPECT_EQ(detail::fwd_tail_split(geometry(8, 8, 128, 128, 64), 3).parts, 3);
  EXPECT_EQ(detail::fwd_tail_split(geometry(8, 8, 128, 128, 64), 8).parts, 8);
  EXPECT_GT(detail::fwd_tail_split(geometry(8, 8, 128, 128, 64), detail::kFwdSplitOn).parts, 1);
}

TEST(Sm80FwdSplit, TheWaveIsTheSmsTimesTheirCtas) {
  // flux-1024: 36 x 24 tiles of 128 rows at D = 128 fill 3.27 waves of 264 CTAs; the tail of 72
  // is what a wave of 132 (one CTA per SM) would leave too, but a tile takes twice as long there.
  const detail::FwdSplitGeometry two = sm80_geometry(24, 4608, 4608, 128, 0);
  const detail::FwdSplitGeometry one = sm80_geometry(24, 4608, 4608, 128, 0, 1);
  EXPECT_EQ(two.tiles, 864);
  EXPECT_EQ(two.key_blocks, 72);
  EXPECT_EQ(detail::fwd_tail_tiles(two), 72);
  EXPECT_EQ(detail::fwd_tail_tiles(one), 72);
  EXPECT_DOUBLE_EQ(detail::fwd_split_cost(two, {1, 72}), 4 * 73);
  EXPECT_DOUBLE_EQ(detail::fwd_split_cost(one, {1, 72}), 7 * 73);
  // Three parts: the tail's 216 units take one round of 24 blocks (and one of overhead) on 264
  // CTAs, two on 132; the combine, in key blocks, costs twice as many of the shorter blocks of
  // a CTA that has its SM to itself.
  const detail::FwdSplit s = detail::fwd_split_of(72, 3);
  const double combine_two = detail::fwd_split_cost(two, s) - (3 * 73 + 25);
  const double combine_one = detail::fwd_split_cost(one, s) - (6 * 73 + 2 * 25);
  EXPECT_GT(combine_two, 0.0);
  EXPECT_NEAR(combine_one, 2.0 * combine_two, 1e-9);
  // Full waves: 528 tiles on 264 CTAs have nothing to split.
  EXPECT_EQ(detail::fwd_tail_split(sm80_geometry(33, 2048, 4096, 128, 0), detail::kFwdSplitOn).parts,
            1);
}

TEST(Sm80FwdSplit, ImageCasesOnTheH200) {
  // flux-1024: the Nsight Compute profile's busiest SM ran 1.60 M cycles against 1.31 M on
  // average, four waves against 3.27; three parts of 24 blocks put the tail's 216 units on the
  // 264 CTAs: 4 x 73 -> 3 x 73 + 25 key blocks plus the combine, 1.17x modelled.
  const detail::FwdSplitGeometry flux = sm80_geometry(24, 4608, 4608, 128, 0);
  const detail::FwdSplit f = detail::fwd_tail_split(flux, detail::kFwdSplitAuto);
  EXPECT_EQ(f.parts, 3);
  EXPECT_EQ(f.blocks_per_part, 24);
  EXPECT_LT(detail::fwd_split_cost(flux, f), 0.87 * detail::fwd_split_cost(flux, {1, 72}));
  // sdxl-self-128 (D = 64, 128 x 128 tiles): 640 tiles, a tail of 112; two parts of 16 blocks,
  // 1.12x modelled.
  const detail::FwdSplitGeometry sdxl = sm80_geometry(20, 4096, 4096, 64, 1);
  EXPECT_EQ(detail::fwd_tail_tiles(sdxl), 112);
  const detail::FwdSplit x = detail::fwd_tail_split(sdxl, detail::kFwdSplitAuto);
  EXPECT_EQ(x.parts, 2);
  EXPECT_EQ(x.blocks_per_part, 16);
  EXPECT_LT(detail::fwd_split_cost(sdxl, x), 0.9 * detail::fwd_split_cost(sdxl, {1, 32}));
  // video-49f-720p: 6144 tiles of 512 key blocks, a tail of 72 after 23 waves: the split saves
  // most of one tile's time out of 24, about 3 %, still above the 2 % auto asks.
  const detail::FwdSplitGeometry video = sm80_geometry(24, 32760, 32760, 128, 0);
  EXPECT_EQ(detail::fwd_tail_tiles(video), 72);
  const detail::FwdSplit v = detail::fwd_tail_split(video, detail::kFwdSplitAuto);
  EXPECT_GT(v.parts, 1);
  const double gain = detail::fwd_split_cost(video, {1, 512}) / detail::fwd_split_cost(video, v);
  EXPECT_GT(gain, detail::kFwdMinSplitGain);
  EXPECT_LT(gain, 1.05);
  // vit-b16-224: 6144 tiles of two 128-key blocks, a tail of 72 after 23 waves: halves would
  // save one block of 24 tile times, less than the combine costs.
  const detail::FwdSplitGeometry vit = sm80_geometry(256 * 12, 197, 197, 64, 1);
  EXPECT_EQ(detail::fwd_tail_split(vit, detail::kFwdSplitAuto).parts, 1);
  EXPECT_EQ(detail::fwd_tail_split(vit, detail::kFwdSplitOn).parts, 2);  // forced, it splits
  // sdxl-cross: one block of 77 keys, nothing to split.
  EXPECT_EQ(detail::fwd_tail_split(sm80_geometry(20, 4096, 77, 64, 1), detail::kFwdSplitOn).parts,
            1);
}

TEST(Sm80FwdSplit, RequestsOffOnAndCounts) {
  const detail::FwdSplitGeometry g = sm80_geometry(24, 4608, 4608, 128, 0);
  EXPECT_EQ(detail::fwd_tail_split(g, detail::kFwdSplitOff).parts, 1);
  for (int parts = 2; parts <= detail::kFwdMaxSplitParts; ++parts) {
    const detail::FwdSplit s = detail::fwd_tail_split(g, parts);
    EXPECT_EQ(s.parts, parts);  // 72 blocks: every count divides them into non-empty parts
    EXPECT_EQ(s.blocks_per_part, detail::fwd_split_of(72, parts).blocks_per_part);
  }
  // The GPU tests' small shapes (test_gpu_sm80_fwd_split.cpp): a few tiles, all in the one partial
  // wave, split as asked: 1000 keys are 16 blocks of 64 (the last one partial), 8 of 128.
  const detail::FwdSplitGeometry small = sm80_geometry(2, 200, 1000, 128, 0);
  EXPECT_EQ(detail::fwd_tail_tiles(small), 4);
  EXPECT_EQ(detail::fwd_tail_split(small, 3).parts, 3);
  EXPECT_EQ(detail::fwd_tail_split(small, 8).parts, 8);
  EXPECT_EQ(detail::fwd_tail_split(sm80_geometry(2, 200, 1000, 64, 1), 8).parts, 8);
  EXPECT_GT(detail::fwd_tail_split(small, detail::kFwdSplitOn).parts, 1);
}

}  // namespace
}  // namespace flashvision::testing
