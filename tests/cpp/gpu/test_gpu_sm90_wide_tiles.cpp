// The wide tiles of the sm90 forward (src/cuda/sm90/tile_config.h): buckets 32 to 80 have a
// 192-row tile of three consumer warpgroups next to the 128-row one, and the host picks it from the
// shape of the persistent schedule. The choice is checked on its own, and the GPU cases force
// each tile with FLASHVISION_SM90_FWD_ROWS so that small shapes run both against the float64
// reference: partial query tiles where only the first consumer has rows, causal masks, grouped
// heads, varlen batches, several tiles per CTA.
#include <gtest/gtest.h>

#include <string>

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

static_assert(sm90::wide_block_m(32) == 192 && sm90::wide_block_m(48) == 192 &&
              sm90::wide_block_m(64) == 192 && sm90::wide_block_m(80) == 192 &&
              sm90::wide_block_m(96) == 0);
// Bucket 80's wide tile has keys of its own, and replaces the short width too.
static_assert(sm90::fwd_tile_exists(80, 192, sm90::wide_block_n(80)));
static_assert(!sm90::fwd_tile_exists(80, 192, sm90::fwd_tile(80).block_n));
static_assert(sm90::wide_tile_applies(80, sm90::short_block_n(80)));
static_assert(!sm90::wide_tile_applies(64, sm90::short_block_n(64)));
static_assert(sm90::fwd_tile_exists(64, 192, sm90::fwd_tile(64).block_n));
static_assert(!sm90::fwd_tile_exists(64, 192, sm90::short_block_n(64)), "no wide short tile");
// Bucket 64's wide tile at the text width keeps the text width (one block a tile, cross-tile).
static_assert(sm90::wide_tile_applies(64, sm90::text_block_n(64)));
static_assert(sm90::fwd_tile_exists(64, 192, sm90::text_block_n(64)));
static_assert(sm90::wide_tile_block_n(64, sm90::text_block_n(64)) == sm90::text_block_n(64));
static_assert(sm90::wide_tile_block_n(64, sm90::fwd_tile(64).block_n) == sm90::wide_block_n(64));
static_assert(sm90::wide_tile_block_n(80, sm90::short_block_n(80)) == sm90::wide_block_n(80));
static_assert(sm90::fwd_cross_tile_compiled(64, 192, sm90::text_block_n(64)));
static_assert(!sm90::fwd_cross_tile_compiled(64, 192, sm90::wide_block_n(64)));
static_assert(!sm90::fwd_tile_exists(128, 192, sm90::fwd_tile(128).block_n));
static_assert(sm90::fwd_tile(64, 192, 128).consumers() == 3 &&
              sm90::fwd_threads(sm90::fwd_tile(64, 192, 128)) == 512);

/// The row choice for bucket 64 at its long width, for a dense problem on an H200.
constexpr int rows_64(long long seqlen_q, long long batch_heads) {
  return sm90::fwd_block_m(64, sm90::fwd_tile(64).block_n, seqlen_q, batch_heads, kH200Sms);
}

TEST(Sm90WideTileChoice, ManyWavesTakeTheWideTile) {
  EXPECT_EQ(rows_64(4096, 4 * 32), 192);   // D = 64 sweep at N = 4096
  EXPECT_EQ(rows_64(16384, 32), 192);      // and N = 16384
  EXPECT_EQ(rows_64(1024, 16 * 32), 192);  // N = 1024: padding 1024 rows to 1152 still pays
  EXPECT_EQ(rows_64(4096, 2 * 10), 192);   // SDXL self attention: 4 waves of wide tiles, 5 narrow
  EXPECT_EQ(sm90::fwd_block_m(48, 128, 4096, 16, kH200Sms), 192);  // SD 1.5 64x64 (D = 40)
  EXPECT_EQ(sm90::fwd_block_m(80, 128, 1024, 16 * 16, kH200Sms), 192);  // DiT-XL/2 (D = 72)
  // ViT-H/14 (D = 80): 257 rows fill two wide tiles as they fill three narrow ones.
  EXPECT_EQ(sm90::fwd_block_m(80, sm90::short_block_n(80), 257, 128 * 16, kH200Sms), 192);
  // Cross-attention to 77 text tokens: SD 1.5 (3 waves of wide tiles against 4 of narrow ones)
  // and SDXL (4 against 5).
  EXPECT_EQ(sm90::fwd_block_m(64, sm90::text_block_n(64), 4096, 2 * 8, kH200Sms), 192);
  EXPECT_EQ(sm90::fwd_block_m(64, sm90::text_block_n(64), 4096, 2 * 10, kH200Sms), 192);
}

TEST(Sm90WideTileChoice, FewTilesOrShortRowsKeepTheNarrowTile) {
  // One wave either way: each CTA runs one tile, and 128 rows finish first.
  EXPECT_EQ(rows_64(4000, 2), 128);
  // Short query sequences against long keys: 192 rows would be mostly padding.
  EXPECT_EQ(rows_64(64, 4096), 128);
  // SD 1.5's 32x32 level (D = 80): 96 wide tiles leave a third of the SMs idle.
  EXPECT_EQ(sm90::fwd_block_m(80, 128, 1024, 2 * 8, kH200Sms), 128);
  // Buckets without a wide tile, and the short key widths up to D = 64.
  EXPECT_EQ(sm90::fwd_block_m(128, 176, 4096, 128, kH200Sms), 128);
  EXPECT_EQ(sm90::fwd_block_m(64, sm90::short_block_n(64), 197, 256 * 12, kH200Sms), 128);
  // No device count (0) is read as one SM rather than dividing by zero.
  EXPECT_EQ(sm90::fwd_block_m(64, 128, 1 << 20, 1, 0), 192);
}

class GpuSm90WideTiles : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

TEST_P(GpuSm90WideTiles, BothTilesMatchTheReference) {
  for (const char* rows : {"192", "128"}) {
    ScopedEnv env(kRowsVar, rows);
    SCOPED_TRACE(std::string(kRowsVar) + "=" + rows);
    // One per wide bucket (40 pads to 48), key sequences past the short widths' reach so that the
    // long width runs; query tiles full, partial, and with rows for the first consumer only.
    for (const int64_t dim : {32, 40, 64, 72, 80}) {
      for (const int64_t nq : {192, 200, 50, 383})
        check_forward(target(), dense_case(dtype(), nq, 900, dim));
    }
    // ViT-H/14's 257 tokens at D = 80: the short key width, which the wide tile replaces.
    check_forward(target(), dense_case(dtype(), 257, 257, 80));
  }
}

TEST_P(GpuSm90WideTiles, CausalGroupedAndVarlen) {
  ScopedEnv env(kRowsVar, "192");
  // Causal, aligned bottom-right: more keys than queries, then more queries than keys (the
  // first rows see nothing, whole consumers of a tile may see nothing).
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{300, 1000}, {1000, 900}}) {
    for (const int64_t dim : {64, 80}) {
      AttentionCase c = dense_case(dtype(), nq, nk, dim);
      c.causal = true;
      check_forward(target(), c);
    }
  }
  AttentionCase gqa = dense_case(dtype(), 400, 1000, 64);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  check_forward(target(), gqa);
  AttentionCase mqa = dense_case(dtype(), 250, 1000, 40);
  mqa.heads = 4;
  mqa.heads_kv = 1;
  mqa.layout = Layout::torch;
  mqa.causal = true;
  check_forward(target(), mqa);
  // Varlen: the longest key sequence picks the long width; sequences of one row, none, a tile and
  // a bit, and one whose keys are empty.
  AttentionCase varlen;
  varlen.dtype = dtype();
  varlen.seqlens_q = {1000, 1, 0, 193, 70};
  varlen.seqlens_k = {900, 1000, 5, 193, 0};
  varlen.heads = 4;
  varlen.heads_kv = 2;
  for (const int64_t dim : {64, 72}) {
    varlen.head_dim = dim;
    varlen.causal = false;
    check_forward(target(), varlen);
    varlen.causal = true;
    check_forward(target(), varlen);
  }
}

TEST_P(GpuSm90WideTiles, ScoresRisingFarOverKeyBlocks) {
  // The softmax's path that moves a row's max (stale_max_softmax.cuh) on the three-warpgroup
  // tiles, which rescale O after P V's wait rather than during S's GEMM: every wide bucket at its
  // long width, and bucket 80's wide keys.
  ScopedEnv env(kRowsVar, "192");
  for (const int64_t dim : {32, 40, 64, 72, 80}) {
    check_forward_with_ramps(target(), dense_case(dtype(), 200, 900, dim));
  }
}

TEST_P(GpuSm90WideTiles, SeveralTilesPerCta) {
  // 4 x 40 (sequence, head) pairs x 2 query blocks: more tiles than SMs, so each persistent CTA
  // walks several, and the Q and K/V rings go round across tiles.
  ScopedEnv env(kRowsVar, "192");
  AttentionCase c = dense_case(dtype(), 300, 1000, 64);
  c.batch = 4;
  c.heads = c.heads_kv = 40;
  check_forward(target(), c);
}

TEST_P(GpuSm90WideTiles, TextTilesMatchTheReference) {
  // The wide tile at the text width runs the cross-tile pipeline with three consumers; 128 rows
  // alongside.
  for (const char* rows : {"192", "128"}) {
    ScopedEnv env(kRowsVar, rows);
    SCOPED_TRACE(std::string(kRowsVar) + "=" + rows);
    // SD 1.5's cross-attention (D = 40 on bucket 64): 16 heads x 22 query blocks, two or three a
    // CTA, the last block a third full.
    AttentionCase sd15 = dense_case(dtype(), 4096, 77, 40);
    sd15.heads = sd15.heads_kv = 16;
    check_forward(target(), sd15);
    // Query blocks full, partial, and with rows for the first consumer only; 1 to 80 keys.
    for (const auto& [nq, nk] :
         {std::pair<int64_t, int64_t>{192, 80}, {200, 77}, {50, 1}, {383, 64}}) {
      check_forward(target(), dense_case(dtype(), nq, nk, 64));
    }
    // Grouped heads in the torch layout, several tiles a CTA.
    AttentionCase gqa = dense_case(dtype(), 1000, 77, 64);
    gqa.batch = 3;
    gqa.heads = 48;
    gqa.heads_kv = 8;
    gqa.layout = Layout::torch;
    check_forward(target(), gqa);
    check_forward_with_ramps(target(), dense_case(dtype(), 700, 80, 48));
  }
}

TEST_P(GpuSm90WideTiles, ABadRowCountIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 900, 64), kRowsVar, "160");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90WideTiles, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
