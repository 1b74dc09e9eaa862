// The split of a forward's last wave over the keys (src/cuda/common/fwd_split.h), host-only, no
// GPU needed: which tiles it applies to, that its parts cover a tile's key blocks whole and none
// is empty, and the model's choice on the image cases of the H200 (132 SMs) for the sm90 forward
// (one persistent CTA per SM).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cuda/common/fwd_split.h"
#include "cuda/sm90/tile_config.h"

namespace flashvision::testing {
namespace {

namespace detail = flashvision::detail;
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
  // flux-1024 (36 x 24 tiles, 27 blocks of 176 keys) gains too little; sd15-self-64 (22 x 16 wide
  // tiles, D = 48) ran 6 % slower split on the H200.
  EXPECT_EQ(detail::fwd_tail_split(geometry(864, 27, 128, 176, 128), detail::kFwdSplitAuto).parts, 1);
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

}  // namespace
}  // namespace flashvision::testing
