// The sm90 forward's Q buffers (src/cuda/sm90/tile_config.h, fwd_q_buffers): the text tile has
// two, so that the producer loads the next tile's Q while the consumers still read this one's;
// every other tile one. The host test checks which tiles get two and that they keep O's whole
// staging; the GPU cases run cross-attention to text tokens with three or more tiles a persistent
// CTA, so both buffers go round, with partial query blocks, grouped heads and strides.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

/// Checks one tile of `bucket`.
void expect_q_buffers(int bucket, int block_m, int block_n) {
  SCOPED_TRACE("D = " + std::to_string(bucket) + ", " + std::to_string(block_m) + " x " +
               std::to_string(block_n));
  const bool text = block_m != sm90::kHalfBlockM && block_n == sm90::text_block_n(bucket);
  const int buffers = sm90::fwd_q_buffers(bucket, block_m, block_n);
  EXPECT_EQ(buffers, text ? 2 : 1);
  EXPECT_LE(sm90::fwd_smem_bytes(bucket, block_m, block_n), sm90::kMaxSmemBytes);
  if (buffers == 2) {
    EXPECT_EQ(sm90::epilogue_panels(bucket, block_m, block_n),
              sm90::wanted_epilogue_panels(bucket));
  }
}

TEST(Sm90QBuffers, TwoAtTheTextWidthOnly) {
  for (const int bucket : sm90::kHeadDimBuckets) {
    for (const int block_n : {sm90::fwd_tile(bucket).block_n, sm90::second_block_n(bucket),
                              sm90::short_block_n(bucket), sm90::text_block_n(bucket)}) {
      if (block_n != 0) expect_q_buffers(bucket, sm90::kNarrowBlockM, block_n);
    }
    if (sm90::wide_block_m(bucket) != 0) {
      expect_q_buffers(bucket, sm90::wide_block_m(bucket), sm90::wide_block_n(bucket));
      if (sm90::text_block_n(bucket) != 0) {
        expect_q_buffers(bucket, sm90::wide_block_m(bucket), sm90::text_block_n(bucket));
      }
    }
  }
  EXPECT_EQ(sm90::fwd_q_buffers(64, sm90::kNarrowBlockM, sm90::text_block_n(64)), 2);
}

class GpuSm90QBuffers : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

TEST_P(GpuSm90QBuffers, TextTilesGoRoundBothBuffers) {
  // SD 1.5's cross-attention shape (D = 40 on bucket 64's text tile): 16 heads x 32 query blocks,
  // 512 tiles, three or four a CTA.
  AttentionCase sd15 = dense_case(dtype(), 4096, 77, 40);
  sd15.heads = sd15.heads_kv = 16;
  check_forward(target(), sd15);
  // D = 64, grouped heads, strided rows, 1000 queries (the last block partial): 48 x 8 tiles.
  AttentionCase gqa = dense_case(dtype(), 1000, 80, 64);
  gqa.heads = 48;
  gqa.heads_kv = 12;
  gqa.layout = Layout::torch;
  gqa.row_pad = 8;
  check_forward(target(), gqa);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90QBuffers, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
