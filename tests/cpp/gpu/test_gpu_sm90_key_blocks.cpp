// The key-block widths of the sm90 forward (src/cuda/sm90/tile_config.h): buckets 32 to 80 have a
// short width next to the long one, bucket 64 a text width (80 keys) as well, and the host picks
// one from the longest key sequence. The cases put Nk on both sides of every length where the
// choice changes and run causal masks, grouped heads and varlen batches at every width, against
// the float64 reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kTextVar = "FLASHVISION_SM90_FWD_TEXT";

constexpr bool picks_short(int bucket, long long max_seqlen_k) {
  return sm90::fwd_block_n(bucket, max_seqlen_k) == sm90::short_block_n(bucket);
}

// The named cases below rely on these choices: a change of the selection model that moves them
// must move the cases too (the boundary test follows the model by itself).
static_assert(picks_short(64, 197), "ViT-B/16: one short block");
static_assert(picks_short(64, 577), "ViT-L/14-336: three short blocks");
static_assert(picks_short(80, 257), "ViT-H/14: two short blocks");
static_assert(picks_short(48, 77), "SD 1.5 cross attention: one short block");
static_assert(!picks_short(80, 1024) && !picks_short(64, 4096), "long sequences: long width");
static_assert(!picks_short(128, 197), "bucket 128 has no short width");

// Bucket 128's second long width (192 keys) where it pads fewer keys than 176, counting each
// block's overhead (key_blocks_cost); the other buckets have none.
static_assert(sm90::second_block_n(128) == 192 && sm90::second_block_n(64) == 0 &&
              sm90::second_block_n(160) == 0 && sm90::second_block_n(256) == 0);
static_assert(sm90::fwd_block_n(128, 1024) == 176, "N = 1024: 1056 keys rather than 1152");
static_assert(sm90::fwd_block_n(128, 4608) == 192, "Flux 1024: 24 blocks of 192, not 27 of 176");
static_assert(sm90::fwd_block_n(128, 16384) == 192 && sm90::fwd_block_n(128, 32760) == 192);
static_assert(sm90::fwd_block_n(128, 177) == 192 && sm90::fwd_block_n(128, 193) == 176,
              "one block of 192 rather than two of 176; past 192 keys, two of 176");

constexpr bool picks_text(int bucket, long long max_seqlen_k) {
  return sm90::text_block_n(bucket) != 0 &&
         sm90::fwd_block_n(bucket, max_seqlen_k) == sm90::text_block_n(bucket);
}
static_assert(sm90::text_block_n(64) == 80 && sm90::text_block_n(48) == 0 &&
              sm90::text_block_n(128) == 0);
static_assert(picks_text(64, 77) && picks_text(64, 1) && picks_text(64, 80),
              "SDXL cross attention: one text block");
static_assert(!picks_text(64, 81) && sm90::fwd_block_n(64, 81) == sm90::fwd_tile(64).block_n,
              "past one text block: the long width (one block of 128 costs less than of 208)");
static_assert(!picks_text(48, 77), "bucket 48 has no text width of its own");
static_assert(sm90::fwd_text_bucket(48, 77) == 64 && sm90::fwd_text_bucket(48, 80) == 64 &&
                  picks_text(sm90::fwd_text_bucket(48, 77), 77),
              "SD 1.5 cross attention (D = 40) runs on bucket 64's text tile");
static_assert(sm90::fwd_text_bucket(48, 81) == 48 && sm90::fwd_text_bucket(32, 77) == 32 &&
                  sm90::fwd_text_bucket(64, 77) == 64 && sm90::fwd_text_bucket(80, 77) == 80,
              "other keys and other buckets keep their own bucket");
static_assert(sm90::fwd_block_n(64, 77, /*text_width=*/false) == sm90::fwd_tile(64).block_n,
              "FLASHVISION_SM90_FWD_TEXT=0: the long width");

/// The buckets with a short width, each with a head dim in it (below the bucket's top where the
/// bucket has room, so that padded columns take part too).
struct BucketDim {
  int bucket;
  int64_t head_dim;
};
constexpr BucketDim kShortWidthBuckets[] = {{32, 32}, {48, 40}, {64, 64}, {80, 72}};
static_assert(sm90::short_block_n(32) != 0 && sm90::short_block_n(48) != 0 &&
              sm90::short_block_n(64) != 0 && sm90::short_block_n(80) != 0);

/// Key lengths on both sides of every change of the width choice of `bucket`, up to just past
/// the longest sequence the short width serves.
std::vector<int64_t> boundary_lengths(int bucket) {
  std::vector<int64_t> lengths;
  const long long last =
      static_cast<long long>(sm90::kShortWidthMaxBlocks) * sm90::short_block_n(bucket) + 1;
  for (long long n = 2; n <= last; ++n) {
    if (sm90::fwd_block_n(bucket, n) != sm90::fwd_block_n(bucket, n - 1)) {
      if (lengths.empty() || lengths.back() != n - 1) lengths.push_back(n - 1);
      lengths.push_back(n);
    }
  }
  return lengths;
}

/// The key widths on 128-row tiles: these small problems would otherwise take half tiles
/// (test_gpu_sm90_half_tiles.cpp runs the widths there).
constexpr const char* kRowsVar = "FLASHVISION_SM90_FWD_ROWS";

class GpuSm90KeyBlocks : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
  ScopedEnv rows_{kRowsVar, "128"};
};

TEST(Sm90KeyBlockChoice, BoundariesSwitchWidths) {
  for (const BucketDim& b : kShortWidthBuckets) {
    const std::vector<int64_t> lengths = boundary_lengths(b.bucket);
    ASSERT_GE(lengths.size(), 4u) << "bucket " << b.bucket;
    bool saw_short = false, saw_long = false;
    for (const int64_t n : lengths) {
      const int width = sm90::fwd_block_n(b.bucket, n);
      saw_short |= width == sm90::short_block_n(b.bucket);
      saw_long |= width == sm90::fwd_tile(b.bucket).block_n;
    }
    EXPECT_TRUE(saw_short && saw_long) << "bucket " << b.bucket;
    // Past the short width's reach the long width is kept whatever the padding.
    const long long reach =
        static_cast<long long>(sm90::kShortWidthMaxBlocks) * sm90::short_block_n(b.bucket);
    EXPECT_EQ(sm90::fwd_block_n(b.bucket, reach + 1), sm90::fwd_tile(b.bucket).block_n);
    EXPECT_EQ(sm90::fwd_block_n(b.bucket, 1 << 20), sm90::fwd_tile(b.bucket).block_n);
  }
}

/// One bucket per test, so that a bucket a restricted build lacks shows as skipped on its own.
class GpuSm90KeyBlockBoundaries : public ::testing::TestWithParam<std::tuple<DType, BucketDim>> {
 protected:
  ScopedEnv rows_{kRowsVar, "128"};
  void SetUp() override {
    const std::string why = kernel_unavailable(CudaKernel::sm90);
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(GpuSm90KeyBlockBoundaries, LengthsAroundEveryChange) {
  const auto& [dtype, b] = GetParam();
  bool causal = false;
  for (const int64_t n : boundary_lengths(b.bucket)) {
    // 130 query rows: a full and a partial query tile; every other length also causal.
    AttentionCase c = dense_case(dtype, 130, n, b.head_dim);
    c.batch = 1;
    c.causal = causal;
    causal = !causal;
    SCOPED_TRACE("block_n " + std::to_string(sm90::fwd_block_n(b.bucket, n)));
    check_forward(cuda_target(CudaKernel::sm90), c);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90KeyBlockBoundaries,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::ValuesIn(kShortWidthBuckets)),
                         [](const auto& point) {
                           return std::string(to_string(std::get<0>(point.param))) + "_d" +
                                  std::to_string(std::get<1>(point.param).bucket);
                         });

TEST_P(GpuSm90KeyBlocks, ImageSequenceLengths) {
  // ViT-B/16 (one short block), ViT-L/14-336 (three, the last partial), full blocks, ViT-H/14
  // (two 160-key blocks), SD cross attention (one 96-key block for 77 tokens).
  for (const int64_t n : {197, 208, 416, 577})
    check_forward(target(), dense_case(dtype(), n, n, 64));
  check_forward(target(), dense_case(dtype(), 257, 257, 80));
  check_forward(target(), dense_case(dtype(), 300, 77, 40));
}

TEST_P(GpuSm90KeyBlocks, ScoresRisingFarAtOtherWidths) {
  // The softmax's path that moves a row's max (stale_max_softmax.cuh) on the short widths (three
  // blocks of 208 keys at D = 64, two of 160 at D = 80, three of 96 at D = 40), on bucket 128's
  // second long width (six blocks of 192) and on the buckets GpuFeatures' ramps leave out (160,
  // 192).
  ASSERT_EQ(sm90::fwd_block_n(128, 1152), 192);
  for (const auto& [nk, dim] : {std::pair<int64_t, int64_t>{577, 64},
                                {257, 80},
                                {288, 40},
                                {1152, 128},
                                {1000, 160},
                                {1000, 192}}) {
    ASSERT_TRUE(dim >= 128 || picks_short(sm90::head_dim_bucket(dim), nk))
        << "Nk " << nk << " D " << dim;
    check_forward_with_ramps(target(), dense_case(dtype(), 130, nk, dim));
  }
}

TEST_P(GpuSm90KeyBlocks, SecondLongWidthAtD128) {
  // Key lengths on both sides of the first changes between 176 and 192 keys, at D = 128 and with
  // padded head columns (120), every other one causal; grouped heads; a varlen batch whose longest
  // key sequence picks 192 and whose others are shorter than a block or empty.
  bool causal = false;
  for (const int64_t n : {176, 177, 192, 193, 352, 353, 1056, 1057, 1152, 1153}) {
    for (const int64_t dim : {128, 120}) {
      AttentionCase c = dense_case(dtype(), 130, n, dim);
      c.causal = causal;
      causal = !causal;
      SCOPED_TRACE("Nk " + std::to_string(n) + " block_n " +
                   std::to_string(sm90::fwd_block_n(128, n)));
      check_forward(target(), c);
    }
  }
  AttentionCase gqa = dense_case(dtype(), 300, 1152, 128);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  check_forward(target(), gqa);
  AttentionCase varlen;
  varlen.dtype = dtype();
  varlen.seqlens_q = {200, 1, 0, 129};
  varlen.seqlens_k = {1152, 100, 7, 0};
  varlen.heads = 4;
  varlen.heads_kv = 2;
  varlen.head_dim = 128;
  ASSERT_EQ(sm90::fwd_block_n(128, 1152), 192);
  for (const bool c : {false, true}) {
    varlen.causal = c;
    check_forward(target(), varlen);
  }
}

TEST_P(GpuSm90KeyBlocks, TextTokens) {
  // 77 text tokens against latent queries: full and partial query tiles, a head dim padded into
  // bucket 64, bucket 48's head dims on bucket 64 (SD 1.5's 40, and 48), the layouts, grouped
  // heads, causal (bottom-right: the first rows see nothing), and a varlen batch whose longest key
  // sequence fills the 80-key block; each at the text width and with it turned off
  // (FLASHVISION_SM90_FWD_TEXT=0: the long width, and bucket 48's own short width).
  ASSERT_TRUE(picks_text(64, 77) && picks_text(64, 80));
  AttentionCase padded = dense_case(dtype(), 260, 77, 56);
  padded.layout = Layout::torch;
  AttentionCase sd15 = dense_case(dtype(), 1100, 77, 40);
  sd15.layout = Layout::torch;
  AttentionCase full48 = dense_case(dtype(), 150, 80, 48);
  AttentionCase gqa = dense_case(dtype(), 200, 80, 64);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  AttentionCase gqa_causal = gqa;
  gqa_causal.causal = true;
  AttentionCase varlen;
  varlen.dtype = dtype();
  varlen.seqlens_q = {300, 1, 77, 0, 129};
  varlen.seqlens_k = {77, 80, 1, 5, 0};
  varlen.heads = 4;
  varlen.heads_kv = 2;
  varlen.head_dim = 64;
  for (const char* mode : {"auto", "0"}) {
    ScopedEnv env(kTextVar, mode);
    SCOPED_TRACE(std::string(kTextVar) + "=" + mode);
    for (const int64_t nq : {int64_t{77}, int64_t{300}, int64_t{1024}}) {
      check_forward(target(), dense_case(dtype(), nq, 77, 64));
    }
    for (const AttentionCase& c : {padded, sd15, full48, gqa, gqa_causal, varlen}) {
      check_forward(target(), c);
    }
  }
}

TEST_P(GpuSm90KeyBlocks, ABadTextWidthValueIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 77, 64), kTextVar, "yes");
}

TEST_P(GpuSm90KeyBlocks, CausalAtShortWidth) {
  // The diagonal inside the single block; queries ahead of keys (bottom-right alignment: some
  // blocks are skipped); more queries than keys (the first rows see nothing).
  for (const auto& [nq, nk, dim] : {std::tuple<int64_t, int64_t, int64_t>{197, 197, 64},
                                    {300, 577, 64},
                                    {577, 200, 64},
                                    {257, 257, 80},
                                    {77, 150, 72}}) {
    ASSERT_TRUE(picks_short(sm90::head_dim_bucket(dim), nk)) << "Nk " << nk << " D " << dim;
    AttentionCase c = dense_case(dtype(), nq, nk, dim);
    c.causal = true;
    check_forward(target(), c);
  }
}

TEST_P(GpuSm90KeyBlocks, GroupedHeadsAtShortWidth) {
  for (const bool causal : {false, true}) {
    AttentionCase gqa = dense_case(dtype(), 197, 197, 64);
    gqa.heads = 6;
    gqa.heads_kv = 2;
    gqa.causal = causal;
    check_forward(target(), gqa);
    AttentionCase mqa = dense_case(dtype(), 257, 257, 80);
    mqa.heads = 4;
    mqa.heads_kv = 1;
    mqa.causal = causal;
    mqa.layout = Layout::torch;
    check_forward(target(), mqa);
  }
}

TEST_P(GpuSm90KeyBlocks, VarlenMixedLengths) {
  // The longest key sequence picks the width: short here (208), with sequences of one key, none,
  // a partial block and a full one.
  static_assert(picks_short(64, 208));
  AttentionCase c;
  c.dtype = dtype();
  c.seqlens_q = {197, 3, 150, 5, 130, 1};
  c.seqlens_k = {197, 1, 150, 0, 208, 64};
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = 64;
  check_forward(target(), c);
  c.causal = true;
  check_forward(target(), c);

  // Short (160 at bucket 80) with grouped heads and causal rows that see nothing.
  static_assert(picks_short(80, 257));
  AttentionCase h;
  h.dtype = dtype();
  h.seqlens_q = {257, 100, 64, 0, 9};
  h.seqlens_k = {257, 160, 33, 1, 2};
  h.heads = 4;
  h.heads_kv = 1;
  h.head_dim = 72;
  h.causal = true;
  check_forward(target(), h);

  // Long: one sequence past the short width's reach makes the short ones run at 128 keys.
  static_assert(!picks_short(64, 900));
  AttentionCase l;
  l.dtype = dtype();
  l.seqlens_q = {197, 900, 77};
  l.seqlens_k = {197, 900, 77};
  l.heads = l.heads_kv = 2;
  l.head_dim = 64;
  check_forward(target(), l);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90KeyBlocks, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
