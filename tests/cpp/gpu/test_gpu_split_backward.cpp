// The sm80 backward's query split: when (key blocks x kv heads x sequences) cannot fill the GPU,
// several CTAs share one key block's query blocks and their fp32 partial dK, dV are summed by a
// reduce kernel. BwdSplitPolicy checks the host-side choice (no GPU needed); GpuSplitBackward runs
// shapes whose grids split on an H200 (132 SMs; most also on GPUs with far fewer): at most 20
// CTAs of (key block, kv head, sequence) and at least 4 query blocks of 64 rows.
#include <gtest/gtest.h>

#include <random>

#include "attention_check.h"
#include "cuda/sm80/bwd_split.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

using detail::sm80::bwd_query_splits;

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(BwdSplitPolicy, GridsThatFillTheGpuAreNotSplit) {
  // ViT-B/16 at batch 256: 2 key blocks x 12 heads x 256 images.
  EXPECT_EQ(bwd_query_splits(2 * 12 * 256, 4, 132, kMiB), 1);
  EXPECT_EQ(bwd_query_splits(2 * 132, 1000, 132, kMiB), 1);
  // SD 1.5 at 32x32: 8 key blocks x 8 heads x 2 images is one wave already; 2 splits would take
  // two waves of half the steps.
  EXPECT_EQ(bwd_query_splits(128, 16, 132, kMiB), 1);
}

TEST(BwdSplitPolicy, ShortKeySequencesSplitTheQueryBlocks) {
  // SD 1.5 cross-attention on an H200: 1 key block x 8 heads x 2 images, 64 query blocks -> one
  // wave of 128 CTAs with 8 blocks each (16 splits, two waves of 4, are no faster).
  EXPECT_EQ(bwd_query_splits(16, 64, 132, 2 * 16 * 77 * 40 * 4), 8);
  // SDXL cross-attention: 20 CTAs -> 13 splits, two waves of 5 blocks (6 splits: one of 11).
  EXPECT_EQ(bwd_query_splits(20, 64, 132, 2 * 20 * 77 * 64 * 4), 13);
  // SD 1.5 at 16x16 (head dim 160): 4 key blocks x 8 heads x 2 images, 4 query blocks.
  EXPECT_EQ(bwd_query_splits(64, 4, 132, kMiB), 2);
  // 1.5 waves: 3 waves of half the steps beat 2 waves of all of them.
  EXPECT_EQ(bwd_query_splits(198, 1000, 132, kMiB), 2);
}

TEST(BwdSplitPolicy, EverySplitKeepsTwoQueryBlocks) {
  EXPECT_EQ(bwd_query_splits(1, 9, 132, kMiB), 3);  // 3 blocks each; 4 splits would leave 3 too
  EXPECT_EQ(bwd_query_splits(1, 3, 132, kMiB), 1);
  EXPECT_EQ(bwd_query_splits(1, 100000, 132, kMiB), detail::sm80::kBwdMaxSplits);
}

TEST(BwdSplitPolicy, PartialWorkspaceStaysWithinBudget) {
  // Deterministic grids (kv heads x sequences) with long key sequences: 100 MiB per split.
  EXPECT_EQ(bwd_query_splits(24, 72, 132, 100 * kMiB), 2);
  EXPECT_EQ(bwd_query_splits(24, 72, 132, 300 * kMiB), 1);
}

AttentionCase split_case(DType dtype, int64_t nq, int64_t nk, int64_t heads, int64_t heads_kv,
                         int64_t dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.batch = 2;
  c.seqlen_q = nq;
  c.seqlen_k = nk;
  c.heads = heads;
  c.heads_kv = heads_kv;
  c.head_dim = dim;
  return c;
}

/// Uneven varlen lengths: a long query sequence over 77 keys, a query sequence shorter than one
/// split share, an empty one, one whose keys outnumber its queries, and a single key.
AttentionCase split_varlen(DType dtype, int64_t heads, int64_t heads_kv, bool causal, int64_t dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.seqlens_q = {700, 3, 0, 450, 129};
  c.seqlens_k = {77, 5, 9, 200, 1};
  c.heads = heads;
  c.heads_kv = heads_kv;
  c.head_dim = dim;
  c.causal = causal;
  return c;
}

class GpuSplitBackward : public GpuKernelTest {};

TEST_P(GpuSplitBackward, ShortKeysManyQueries) {
  // Cross-attention shapes: one key block, ragged last query block; every head-dim tile family.
  for (const int64_t dim : {40, 64, 128, 256}) {
    check_backward(target(), split_case(dtype(), 1000, 77, 2, 2, dim));
  }
}

TEST_P(GpuSplitBackward, SeveralKeyBlocks) {
  check_backward(target(), split_case(dtype(), 900, 300, 2, 2, 64));
  check_backward(target(), split_case(dtype(), 900, 300, 2, 2, 160));
}

TEST_P(GpuSplitBackward, GroupedAndMultiQuery) {
  check_backward(target(), split_case(dtype(), 800, 77, 8, 2, 64));
  check_backward(target(), split_case(dtype(), 600, 130, 6, 1, 96));
}

TEST_P(GpuSplitBackward, Causal) {
  // Bottom-right aligned: with Nq > Nk the first Nq - Nk rows see no key; with Nq = Nk the late
  // key blocks are seen by fewer query blocks than there are splits.
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{1000, 77}, {520, 520}, {700, 260}}) {
    AttentionCase c = split_case(dtype(), nq, nk, 4, 2, 64);
    c.causal = true;
    check_backward(target(), c);
  }
}

TEST_P(GpuSplitBackward, VarlenUnevenLengths) {
  for (const bool causal : {false, true}) {
    check_backward(target(), split_varlen(dtype(), 2, 2, causal, 64));
    check_backward(target(), split_varlen(dtype(), 4, 1, causal, 128));
  }
}

TEST_P(GpuSplitBackward, VarlenTorchLayoutPadded) {
  AttentionCase c = split_varlen(dtype(), 4, 2, true, 80);
  c.layout = Layout::torch;
  c.row_pad = 8;
  check_backward(target(), c);
}

TEST_P(GpuSplitBackward, DeterministicIsCorrect) {
  for (const bool causal : {false, true}) {
    AttentionCase c = split_varlen(dtype(), 4, 2, causal, 64);
    c.deterministic = true;
    check_backward(target(), c);
    AttentionCase dense = split_case(dtype(), 1000, 300, 4, 2, 128);
    dense.causal = causal;
    dense.deterministic = true;
    check_backward(target(), dense);
  }
}

TEST_P(GpuSplitBackward, DeterministicIsBitwiseReproducible) {
  AttentionCase c = split_varlen(dtype(), 4, 2, true, 64);
  c.deterministic = true;
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " " + c.describe());
  std::mt19937_64 rng(seed);
  AttentionRun run(target(), c, draw_inputs(c, rng));
  run.forward();
  run.backward();
  const TensorRead dq = run.read_dq(), dk = run.read_dk(), dv = run.read_dv();
  for (int attempt = 0; attempt < 2; ++attempt) {
    run.backward();
    EXPECT_EQ(run.read_dq().values, dq.values) << "dq differs on run " << attempt + 2;
    EXPECT_EQ(run.read_dk().values, dk.values) << "dk differs on run " << attempt + 2;
    EXPECT_EQ(run.read_dv().values, dv.values) << "dv differs on run " << attempt + 2;
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSplitBackward, dtype_kernel_values(), dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
