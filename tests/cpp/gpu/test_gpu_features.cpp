// Options and layouts on the CUDA backend: GQA/MQA, varlen (with empty sequences), causal
// alignment, layouts, padded strides, softmax scale, lse absent, grids past 65,535 heads, and the
// errors for what the sm80 path does not serve. GpuSanitize.* is the small subset run under
// compute-sanitizer (memcheck, racecheck).
#include <gtest/gtest.h>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

AttentionCase dense(DType dtype, int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.batch = 2;
  c.seqlen_q = seqlen_q;
  c.seqlen_k = seqlen_k;
  c.heads = c.heads_kv = 2;
  c.head_dim = head_dim;
  return c;
}

/// Varlen lengths with a single-row sequence, one long sequence, an empty query sequence, and a
/// sequence whose causal rows partly see nothing (64 queries, 33 keys).
AttentionCase varlen(DType dtype, int64_t heads, int64_t heads_kv, bool causal, int64_t dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.seqlens_q = {1, 5, 300, 0, 64, 7};
  c.seqlens_k = {1, 17, 300, 5, 33, 7};
  c.heads = heads;
  c.heads_kv = heads_kv;
  c.head_dim = dim;
  c.causal = causal;
  return c;
}

class GpuFeatures : public GpuTest<::testing::TestWithParam<DType>> {};

TEST_P(GpuFeatures, GroupedQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense(GetParam(), 61, 150, 64);
    c.heads = 4;
    c.heads_kv = 2;
    c.causal = causal;
    check_backward(cuda_target(), c);
  }
}

TEST_P(GpuFeatures, MultiQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense(GetParam(), 150, 61, 128);
    c.heads = 6;
    c.heads_kv = 1;
    c.causal = causal;
    check_backward(cuda_target(), c);
  }
}

TEST_P(GpuFeatures, Varlen) {
  for (const int64_t dim : {40, 64, 128}) check_backward(cuda_target(), varlen(GetParam(), 2, 2, false, dim));
}

TEST_P(GpuFeatures, VarlenCausalGqa) {
  for (const int64_t dim : {72, 256}) check_backward(cuda_target(), varlen(GetParam(), 4, 2, true, dim));
}

TEST_P(GpuFeatures, VarlenMqaTorchLayoutPadded) {
  AttentionCase c = varlen(GetParam(), 4, 1, true, 80);
  c.layout = Layout::torch;
  c.row_pad = 8;
  check_backward(cuda_target(), c);
}

TEST_P(GpuFeatures, VarlenQueriesWithoutKeys) {
  AttentionCase c;
  c.dtype = GetParam();
  c.seqlens_q = {4, 9, 3};
  c.seqlens_k = {6, 0, 2};
  c.heads = c.heads_kv = 2;
  c.head_dim = 64;
  check_backward(cuda_target(), c);
}

TEST_P(GpuFeatures, CausalAlignment) {
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{50, 130}, {111, 111}, {130, 50},
                               {300, 1}, {1, 300}}) {
    AttentionCase c = dense(GetParam(), nq, nk, 64);
    c.causal = true;
    check_backward(cuda_target(), c);
  }
}

TEST_P(GpuFeatures, LayoutsAndPaddedStrides) {
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    for (const int64_t pad : {0, 8, 24}) {
      AttentionCase c = dense(GetParam(), 100, 120, 72);
      c.layout = layout;
      c.row_pad = pad;
      c.causal = pad == 8;
      check_backward(cuda_target(), c);
    }
  }
}

TEST_P(GpuFeatures, SoftmaxScale) {
  for (const float scale : {0.3f, 1.7f}) {
    AttentionCase c = dense(GetParam(), 65, 80, 32);
    c.softmax_scale = scale;
    check_backward(cuda_target(), c);
  }
}

TEST_P(GpuFeatures, SmallHeadDims) {
  for (const int64_t dim : {8, 16, 24, 48, 56, 112, 136, 192, 200, 248}) {
    check_backward(cuda_target(), dense(GetParam(), 67, 93, dim));
  }
}

TEST_P(GpuFeatures, ForwardWithoutLse) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense(GetParam(), 90, 70, 96);
    c.causal = causal;
    c.with_lse = false;
    check_forward(cuda_target(), c);
  }
}

TEST_P(GpuFeatures, ManyHeadsGrid) {
  // batch x heads past 65,535: the grid folds them into x.
  AttentionCase c = dense(GetParam(), 3, 5, 32);
  c.batch = 300;
  c.heads = c.heads_kv = 224;
  check_backward(cuda_target(), c);
}

TEST_P(GpuFeatures, AutomaticBackendPicksCuda) {
  Target target = cuda_target();
  target.backend = Backend::automatic;
  check_backward(target, dense(GetParam(), 33, 45, 64));
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuFeatures, ::testing::Values(DType::bf16, DType::f16),
                         [](const auto& point) { return std::string(to_string(point.param)); });

class GpuErrors : public GpuTest<> {};

/// Runs forward and returns the error message (empty when it did not throw).
std::string forward_error(const AttentionCase& c) {
  std::mt19937_64 rng(test_seed());
  AttentionRun run(cuda_target(), c, draw_inputs(c, rng));
  try {
    run.forward();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(GpuErrors, Float32IsRejectedByName) {
  const std::string what = forward_error(dense(DType::f32, 8, 8, 64));
  EXPECT_NE(what.find("f16 and bf16"), std::string::npos) << what;
}

TEST_F(GpuErrors, HeadDimAbove256IsRejected) {
  const std::string what = forward_error(dense(DType::bf16, 8, 8, 264));
  EXPECT_NE(what.find("256"), std::string::npos) << what;
}

TEST_F(GpuErrors, UnalignedStridesAreRejected) {
  AttentionCase c = dense(DType::bf16, 8, 8, 64);
  c.row_pad = 3;
  const std::string what = forward_error(c);
  EXPECT_NE(what.find("multiples of 8"), std::string::npos) << what;
}

/// Small, fast cases for compute-sanitizer: every kernel, masks, varlen and GQA.
class GpuSanitize : public GpuTest<> {};

TEST_F(GpuSanitize, DenseCausalGqa) {
  AttentionCase c = dense(DType::bf16, 130, 77, 64);
  c.heads = 4;
  c.causal = true;
  check_backward(cuda_target(), c);
}

TEST_F(GpuSanitize, VarlenTorchLayout) {
  AttentionCase c = varlen(DType::f16, 2, 1, true, 80);
  c.layout = Layout::torch;
  check_backward(cuda_target(), c);
}

TEST_F(GpuSanitize, LargeHeadDim) { check_backward(cuda_target(), dense(DType::bf16, 70, 140, 256)); }

}  // namespace
}  // namespace flashvision::testing
