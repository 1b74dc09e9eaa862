// The sm90 forward's narrow first key block (tile_config.h's fwd_narrow_first): where a
// sequence's last key block holds few of its keys, the kernel takes only the first
// narrow_first_keys of that block, which its consumers walk first, in S = Q K^T, the mask and the
// softmax (P V takes the whole block, with zero probabilities past them). For every tile with such
// a kernel the cases put the last block's keys on both sides of that limit, with queries shorter
// and longer than the keys, ramped scores (the max a row finds in the narrow block then moves
// later), padded head dims and grouped heads in the torch layout, against the float64 reference,
// with the kernel on and off; the choice itself is checked where it must not apply.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

/// A tile with a narrow-first kernel, a head dim of its bucket below the bucket's top (padded
/// columns take part) and the width the host picks for its keys before the tile replaces it
/// (the wide tile's own width replaces any of bucket 80's).
struct NarrowTile {
  int bucket;
  int block_m;
  int block_n;
  int64_t padded_dim;
};
constexpr NarrowTile kTiles[] = {{64, sm90::kNarrowBlockM, 208, 56}, {80, 192, 96, 72}};

constexpr bool narrow(const NarrowTile& t, long long seqlen_k) {
  return sm90::fwd_narrow_first(t.bucket, t.block_m, t.block_n, seqlen_k, false, false, false,
                                false);
}
constexpr int keys(const NarrowTile& t) {
  return sm90::narrow_first_keys(t.bucket, t.block_m, t.block_n);
}

static_assert(keys(kTiles[0]) == 176 && keys(kTiles[1]) == 80);
static_assert(sm90::short_block_n(64) == 208 && sm90::wide_block_m(80) == 192 &&
              sm90::wide_block_n(80) == 96);
// The image cases it serves: ViT-L/14 at 336 px (577 keys = 2 x 208 + 161), ViT-H/14 (257 = 2 x
// 96 + 65).
static_assert(sm90::fwd_block_n(64, 577) == 208 && narrow(kTiles[0], 577));
static_assert(narrow(kTiles[1], 257));
// The last block's keys on both sides of the limit; whole blocks and tiles of one block (most of
// which take the cross-tile kernel) keep the full width.
static_assert(narrow(kTiles[0], 2 * 208 + 176) && !narrow(kTiles[0], 2 * 208 + 177) &&
              !narrow(kTiles[0], 3 * 208) && !narrow(kTiles[0], 176) && narrow(kTiles[0], 208 + 1));
// Masks, varlen batches, split tiles and shared K/V keep the whole block.
static_assert(
    !sm90::fwd_narrow_first(64, sm90::kNarrowBlockM, 208, 577, true, false, false, false) &&
    !sm90::fwd_narrow_first(64, sm90::kNarrowBlockM, 208, 577, false, true, false, false) &&
    !sm90::fwd_narrow_first(64, sm90::kNarrowBlockM, 208, 577, false, false, true, false) &&
    !sm90::fwd_narrow_first(64, sm90::kNarrowBlockM, 208, 577, false, false, false, true));
// Other tiles have no narrow-first kernel.
static_assert(sm90::narrow_first_keys(64, sm90::kHalfBlockM, 208) == 0 &&
              sm90::narrow_first_keys(64, sm90::kNarrowBlockM, 128) == 0 &&
              sm90::narrow_first_keys(128, sm90::kNarrowBlockM, 176) == 0 &&
              sm90::narrow_first_keys(128, sm90::kNarrowBlockM, 192) == 0 &&
              sm90::narrow_first_keys(80, sm90::kNarrowBlockM, 160) == 0);

/// The shortest key length past one block of tile t whose last block holds `last` keys and for
/// which the host picks t's width (0 where none up to 64 blocks does: bucket 64's short width
/// serves 513 to 624 keys only).
int64_t keys_with_last_block(const NarrowTile& t, int last) {
  for (int64_t n = t.block_n + last; n <= 64 * t.block_n; n += t.block_n) {
    if (t.block_m != sm90::kNarrowBlockM || sm90::fwd_block_n(t.bucket, n) == t.block_n) return n;
  }
  return 0;
}

/// Key lengths for tile t: the fewest keys a last block of the host's choosing holds, the limit
/// less one, the limit and one past it.
std::vector<int64_t> key_lengths(const NarrowTile& t) {
  int fewest = 1;
  while (fewest < keys(t) && keys_with_last_block(t, fewest) == 0) ++fewest;
  std::vector<int64_t> lengths;
  for (const int last : {fewest, keys(t) - 1, keys(t), keys(t) + 1}) {
    const int64_t n = keys_with_last_block(t, last);
    EXPECT_NE(n, 0) << "bucket " << t.bucket << ": no length with " << last << " keys last";
    if (n != 0) lengths.push_back(n);
  }
  return lengths;
}

constexpr const char* kNarrowVar = "FLASHVISION_SM90_FWD_NARROW_FIRST";

class GpuSm90NarrowFirst : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
  ScopedEnv split_{"FLASHVISION_SM90_FWD_SPLIT", "0"};
  ScopedEnv multicast_{"FLASHVISION_SM90_FWD_MULTICAST", "0"};
};

TEST_P(GpuSm90NarrowFirst, LastBlockLengthsMatchTheReference) {
  for (const NarrowTile& t : kTiles) {
    ScopedEnv rows("FLASHVISION_SM90_FWD_ROWS", std::to_string(t.block_m).c_str());
    for (const char* setting : {"auto", "0"}) {
      ScopedEnv env(kNarrowVar, setting);
      for (const int64_t seqlen_k : key_lengths(t)) {
        SCOPED_TRACE("bucket " + std::to_string(t.bucket) + ", " + std::to_string(seqlen_k) +
                     " keys, " + kNarrowVar + "=" + setting);
        for (const int64_t seqlen_q : {int64_t{130}, int64_t{t.block_m + 65}}) {
          AttentionCase c = dense_case(dtype(), seqlen_q, seqlen_k, t.bucket);
          c.batch = 1;
          check_forward(target(), c);
        }
      }
    }
  }
}

TEST_P(GpuSm90NarrowFirst, PaddedHeadDimsAndGroupedHeads) {
  for (const NarrowTile& t : kTiles) {
    ScopedEnv rows("FLASHVISION_SM90_FWD_ROWS", std::to_string(t.block_m).c_str());
    const int64_t seqlen_k = keys_with_last_block(t, keys(t) - 7);
    SCOPED_TRACE("bucket " + std::to_string(t.bucket) + ", " + std::to_string(seqlen_k) + " keys");
    ASSERT_TRUE(narrow(t, seqlen_k));
    AttentionCase c = dense_case(dtype(), 200, seqlen_k, t.padded_dim);
    c.batch = 1;
    check_forward(target(), c);
    c.head_dim = t.bucket;
    c.layout = Layout::torch;
    c.heads = 6;
    c.heads_kv = 2;
    check_forward(target(), c);
  }
}

TEST_P(GpuSm90NarrowFirst, ScoresRisingOverKeyBlocks) {
  for (const NarrowTile& t : kTiles) {
    ScopedEnv rows("FLASHVISION_SM90_FWD_ROWS", std::to_string(t.block_m).c_str());
    const int64_t seqlen_k = keys_with_last_block(t, keys(t) - 15);
    SCOPED_TRACE("bucket " + std::to_string(t.bucket) + ", " + std::to_string(seqlen_k) + " keys");
    AttentionCase c = dense_case(dtype(), 200, seqlen_k, t.bucket);
    c.batch = 1;
    check_forward_with_ramps(target(), c);
  }
}

TEST_P(GpuSm90NarrowFirst, VitSequences) {
  // ViT-L/14 at 336 px and ViT-H/14 at 224 px as the host tiles them.
  check_forward(target(), dense_case(dtype(), 577, 577, 64));
  check_forward(target(), dense_case(dtype(), 257, 257, 80));
}

TEST_P(GpuSm90NarrowFirst, ABadValueIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 577, 577, 64), kNarrowVar, "yes");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90NarrowFirst, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
