// K and V shared by the two CTAs of a cluster in the sm90 forward (src/cuda/sm90/tile_config.h's
// fwd_kv_multicast): each CTA loads half the rows of every K and V block into both with one TMA
// multicast, and a slot is written again only once the consumers of both CTAs have released it.
// The choice and its default are checked on their own; the GPU cases run problems it applies to
// with it forced on (FLASHVISION_SM90_FWD_MULTICAST=1) and off (0) against the float64 reference:
// every tile that has the kernel, a last key block shorter than one CTA's half (the other CTA's
// half is all zeros), several tiles per CTA whose rings go round, grouped heads and strides.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kMulticastVar = "FLASHVISION_SM90_FWD_MULTICAST";

/// The choice for a dense, non-causal, unsplit problem of `seqlen_q` x `seqlen_k` in `bucket`
/// with `block_m`-row tiles and the key width the host picks.
constexpr bool multicast(int bucket, int block_m, long long seqlen_q, long long seqlen_k) {
  const int block_n = block_m == sm90::kNarrowBlockM ? sm90::fwd_block_n(bucket, seqlen_k)
                                                     : sm90::wide_block_n(bucket);
  const long long m_blocks = (seqlen_q + block_m - 1) / block_m;
  const bool cross_tile =
      sm90::fwd_cross_tile(bucket, block_m, block_n, seqlen_k, false, false, false);
  return sm90::fwd_kv_multicast(bucket, block_m, block_n, m_blocks, seqlen_k, false, false, false,
                                cross_tile);
}

TEST(Sm90KvMulticastChoice, LongSequencesOfPairedQueryBlocksShareKeys) {
  EXPECT_TRUE(multicast(128, 128, 4096, 4096));    // the D = 128 sweep (192-key blocks)
  EXPECT_TRUE(multicast(128, 128, 1024, 1024));    // 176-key blocks
  EXPECT_TRUE(multicast(128, 128, 4608, 4608));    // Flux 1024
  EXPECT_TRUE(multicast(80, 128, 1024, 1024));     // DiT-XL/2 (D = 72) on 128-row tiles
  EXPECT_TRUE(multicast(64, 128, 4096, 4096));     // SDXL self attention at 64 x 64 latents
  EXPECT_TRUE(multicast(64, 192, 4096, 4096));     // its wide tile (22 query blocks)
  EXPECT_TRUE(multicast(256, 128, 16384, 16384));  // D = 256
  EXPECT_TRUE(multicast(48, 128, 4096, 4096));     // SD 1.5 at 64 x 64 latents (D = 40)
  EXPECT_TRUE(multicast(80, 192, 1024, 1024));     // DiT-XL/2's wide tile (halves of 48 rows)
}

TEST(Sm90KvMulticastChoice, OtherSchedulesLoadTheirOwnKeys) {
  EXPECT_FALSE(multicast(128, 128, 300, 4096));   // three query blocks: a pair would span heads
  EXPECT_FALSE(multicast(64, 128, 256, 577));     // the short width (ViT-L/14-336)
  EXPECT_FALSE(multicast(64, 128, 256, 77));      // the text width
  EXPECT_FALSE(multicast(128, 128, 256, 150));    // one block: the cross-tile kernel
  EXPECT_FALSE(multicast(512, 128, 4096, 4096));  // two value slices a query block
  EXPECT_FALSE(multicast(32, 128, 4096, 4096));   // bucket 32 (its cluster kernel hung)
  const int n = sm90::fwd_tile(128).block_n;
  EXPECT_FALSE(sm90::fwd_kv_multicast(128, 128, n, 8, 1024, /*causal=*/true, false, false, false));
  EXPECT_FALSE(sm90::fwd_kv_multicast(128, 128, n, 8, 1024, false, /*varlen=*/true, false, false));
  EXPECT_FALSE(sm90::fwd_kv_multicast(128, 128, n, 8, 1024, false, false, /*split=*/true, false));
  EXPECT_FALSE(sm90::fwd_kv_multicast(128, 128, n, 8, 0, false, false, false, false));
}

/// The default for a dense, non-causal problem of `batch_heads` (sequence, head) pairs on the
/// H200's 132 SMs.
constexpr bool multicast_default(int bucket, int block_m, long long seqlen_q, long long seqlen_k,
                                 long long batch_heads) {
  const int block_n = block_m == sm90::kNarrowBlockM ? sm90::fwd_block_n(bucket, seqlen_k)
                                                     : sm90::wide_block_n(bucket);
  const long long m_blocks = (seqlen_q + block_m - 1) / block_m;
  return sm90::fwd_kv_multicast_default(bucket, block_m, block_n, m_blocks, m_blocks * batch_heads,
                                        seqlen_k, false, false, false, 132);
}

TEST(Sm90KvMulticastChoice, ByDefaultWhere32BytePanelsHaveTwoWavesOfLongTiles) {
  EXPECT_TRUE(multicast_default(80, 128, 1024, 1024, 16 * 16));   // DiT-XL/2, 2048 tiles
  EXPECT_TRUE(multicast_default(80, 192, 1024, 1024, 16 * 16));   // on its wide tile (11 blocks)
  EXPECT_FALSE(multicast_default(80, 192, 257, 257, 128 * 16));   // ViT-H/14: 3 key blocks
  EXPECT_TRUE(multicast_default(48, 192, 4096, 4096, 2 * 8));     // SD 1.5 64 x 64, 352 tiles
  EXPECT_FALSE(multicast_default(80, 128, 1024, 1024, 2 * 8));    // SD 1.5 32 x 32: 128 tiles
  EXPECT_FALSE(multicast_default(128, 128, 4096, 4096, 4 * 16));  // 128-byte panels
  EXPECT_FALSE(multicast_default(64, 192, 4096, 4096, 2 * 10));   // SDXL: 128-byte panels
  EXPECT_TRUE(sm90::kv_multicast_pays(48) && sm90::kv_multicast_pays(80));
  EXPECT_FALSE(sm90::kv_multicast_pays(64) || sm90::kv_multicast_pays(96) ||
               sm90::kv_multicast_pays(160) || sm90::kv_multicast_pays(256));
}

class GpuSm90KvMulticast : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }

  /// Runs `c` with `rows`-row tiles and multicast on and off; the choice must apply to it.
  static void check_both(const AttentionCase& c, int rows = sm90::kNarrowBlockM) {
    const int bucket = sm90::head_dim_bucket(c.head_dim);
    ASSERT_TRUE(multicast(bucket, rows, c.seqlen_q, c.seqlen_k)) << c.describe();
    ScopedEnv rows_env("FLASHVISION_SM90_FWD_ROWS", std::to_string(rows).c_str());
    ScopedEnv no_split("FLASHVISION_SM90_FWD_SPLIT", "0");
    for (const char* mode : {"1", "0"}) {
      ScopedEnv env(kMulticastVar, mode);
      SCOPED_TRACE(std::string(kMulticastVar) + "=" + mode);
      check_forward(target(), c);
    }
  }
};

TEST_P(GpuSm90KvMulticast, EveryTileWithTheKernel) {
  // Two query blocks of one head (the second partial) against keys past the short widths
  // (4 x 208 at D = 64), so that every bucket runs its long width.
  for (const int64_t dim : {40, 64, 72, 96, 120, 160, 192, 256}) {
    AttentionCase c = dense_case(dtype(), 200, 900, dim);
    c.batch = 1;
    check_both(c);
  }
  // Bucket 128's second width (192 keys), and the wide tiles of 192 rows (96 keys at D = 80).
  static_assert(sm90::fwd_block_n(128, 1768) == sm90::second_block_n(128));
  check_both(dense_case(dtype(), 256, 1768, 128));
  for (const int64_t dim : {48, 64, 72}) {
    AttentionCase c = dense_case(dtype(), 300, 900, dim);
    c.batch = 1;
    check_both(c, 192);
  }
}

TEST_P(GpuSm90KvMulticast, LastBlockShorterThanAHalf) {
  // 250 keys: a 176-key block and one of 74, whose second half (rows 88 on) is past the keys; 1768
  // keys: nine 192-key blocks and one of 40.
  static_assert(sm90::fwd_block_n(128, 250) == 176);
  check_both(dense_case(dtype(), 256, 250, 128));
  check_both(dense_case(dtype(), 256, 1768, 128));
  check_both(dense_case(dtype(), 256, 900 + 5, 64));
}

TEST_P(GpuSm90KvMulticast, ManyTilesPerCta) {
  // 192 (sequence, head) pairs x 2 query blocks: about three tiles a CTA, so the rings go round
  // and the cluster's CTAs walk the same key blocks tile after tile.
  AttentionCase c = dense_case(dtype(), 256, 200, 128);
  c.batch = 12;
  c.heads = c.heads_kv = 16;
  check_both(c);
}

TEST_P(GpuSm90KvMulticast, GroupedHeadsAndStrides) {
  AttentionCase gqa = dense_case(dtype(), 256, 1000, 128);
  gqa.heads = 12;
  gqa.heads_kv = 4;
  check_both(gqa);
  AttentionCase mqa = dense_case(dtype(), 512, 900, 64);
  mqa.heads = 6;
  mqa.heads_kv = 1;
  mqa.layout = Layout::torch;
  mqa.row_pad = 8;
  mqa.with_lse = false;
  check_both(mqa);
}

TEST_P(GpuSm90KvMulticast, ABadValueIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 256, 1024, 128), kMulticastVar, "2");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90KvMulticast, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
