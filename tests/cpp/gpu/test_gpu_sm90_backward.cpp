// The Hopper backward main kernel (src/cuda/sm90/bwd_kernel.cuh), forced without the sm80
// fallback of the sm90 test target, against the float64 reference: every bucket it serves (with
// padded columns, and 48 and 80, whose consumers compute a dQ panel in common that only one of
// them may add), ragged query and key blocks, GQA and MQA, causal masks either way round, varlen
// batches with empty sequences, grids smaller than the GPU; and which backward automatic dispatch
// picks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuSm90Backward : public GpuSm90Test {
 protected:
  /// The sm90 target with every backward on the Hopper kernel (no sm80 fallback).
  static Target target() {
    Target t = cuda_target(CudaKernel::sm90);
    t.backward_fallback.reset();
    return t;
  }
};

TEST_P(GpuSm90Backward, BucketsAndRaggedBlocks) {
  // Every bucket and widths padded inside them (SD 1.5's 40, DiT's 72, 24, 88, 104); several
  // query blocks (64 rows) and key blocks (128 keys), partial ones, single rows.
  for (const int64_t dim : {32, 24, 48, 40, 64, 56, 80, 72, 96, 88, 128, 104}) {
    SCOPED_TRACE("head_dim " + std::to_string(dim));
    check_backward(target(), dense_case(dtype(), 300, 200, dim));
    check_backward(target(), dense_case(dtype(), 64, 128, dim));
  }
  check_backward(target(), dense_case(dtype(), 1, 1, 64));
  check_backward(target(), dense_case(dtype(), 129, 257, 128));
  // ViT-H/14 at 224: 257 tokens, head dim 80.
  check_backward(target(), dense_case(dtype(), 257, 257, 80));
}

TEST_P(GpuSm90Backward, GroupedHeads) {
  for (const bool causal : {false, true}) {
    for (const int64_t dim : {64, 80, 40}) {
      AttentionCase gqa = dense_case(dtype(), 190, 300, dim);
      gqa.heads = 6;
      gqa.heads_kv = 2;
      gqa.causal = causal;
      check_backward(target(), gqa);
    }
    for (const int64_t dim : {128, 72, 32}) {
      AttentionCase mqa = dense_case(dtype(), 150, 61, dim);
      mqa.heads = 4;
      mqa.heads_kv = 1;
      mqa.causal = causal;
      mqa.layout = Layout::torch;
      check_backward(target(), mqa);
    }
  }
}

TEST_P(GpuSm90Backward, CausalBothWaysRound) {
  // More keys than queries (key blocks seen by few query blocks) and more queries than keys (rows
  // that see no key: LSE = -inf, P = 0).
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{100, 400}, {400, 130}}) {
    for (const int64_t dim : {64, 128, 40, 80, 96}) {
      AttentionCase c = dense_case(dtype(), nq, nk, dim);
      c.causal = true;
      check_backward(target(), c);
    }
  }
}

TEST_P(GpuSm90Backward, VarlenWithEmptySequences) {
  // Rows of a TMA box past a sequence belong to the next one here: the kernel must mask them.
  for (const bool causal : {false, true}) {
    AttentionCase c;
    c.dtype = dtype();
    c.seqlens_q = {1, 5, 300, 0, 64, 7, 130};
    c.seqlens_k = {1, 17, 300, 5, 33, 0, 129};
    c.heads = 4;
    c.heads_kv = 2;
    c.head_dim = 128;
    c.causal = causal;
    check_backward(target(), c);
    c.head_dim = 64;
    c.layout = Layout::torch;
    check_backward(target(), c);
    c.head_dim = 80;
    check_backward(target(), c);
    c.head_dim = 40;
    c.layout = Layout::flash;
    check_backward(target(), c);
  }
}

TEST_P(GpuSm90Backward, ManyCtasAndCustomScale) {
  // More key blocks x heads x sequences than SMs, so CTAs run in waves; a scale other than
  // 1/sqrt(D) reaches dK and dQ.
  for (const int64_t dim : {64, 80}) {
    AttentionCase c = dense_case(dtype(), 100, 512, dim);
    c.batch = 4;
    c.heads = c.heads_kv = 16;
    c.softmax_scale = 0.3f;
    check_backward(target(), c);
  }
}

TEST_P(GpuSm90Backward, ManyStepsPerCtaWithScoresAhead) {
  // Up to 44 steps per CTA (11 query blocks, the last one of 40 rows, x 4 query heads on one kv
  // head) in the buckets whose consumers issue the next step's S^T and dP^T before adding this
  // step's dQ (32 to 96): the slot ring wraps many times under that early wait, the walk crosses
  // heads, and the peeled last step is the partial block. Causal with more queries than keys:
  // the first 380 rows see no key, and each key block's walk starts at its own query block.
  for (const bool causal : {false, true}) {
    for (const int64_t dim : {64, 80, 72, 96}) {
      SCOPED_TRACE("head_dim " + std::to_string(dim) + (causal ? " causal" : ""));
      AttentionCase c = dense_case(dtype(), 680, 300, dim);
      c.heads = 4;
      c.heads_kv = 1;
      c.causal = causal;
      check_backward(target(), c);
    }
  }
}

TEST_P(GpuSm90Backward, AutomaticDispatchByGrid) {
  // A grid of many key blocks takes the Hopper backward; one that would leave most SMs idle
  // (SD cross attention: 77 keys, one key block per head) takes the sm80 backward's query split.
  AttentionCase big = dense_case(dtype(), 64, 2048, 64);
  big.heads = big.heads_kv = 12;
  AttentionCase small = dense_case(dtype(), 1024, 77, 64);
  for (const auto& [c, expected] :
       {std::pair{big, Backend::cuda_sm90}, std::pair{small, Backend::cuda_sm80}}) {
    Target automatic = cuda_target(CudaKernel::sm90);
    automatic.backend = automatic.backward_backend = Backend::automatic;
    automatic.backward_fallback.reset();
    std::mt19937_64 rng(test_seed());
    AttentionRun run(automatic, c, draw_inputs(c, rng));
    run.forward();
    EXPECT_EQ(run.selected_backward_backend(), expected) << "Nk " << c.seqlen_k;
    check_backward(automatic, c);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90Backward, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
