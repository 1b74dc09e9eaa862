// Options and layouts: GQA/MQA, varlen (with empty sequences), causal alignment, torch layout,
// padded strides, softmax scale, lse present or absent. Each test runs in f32, bf16 and f16.
#include <gtest/gtest.h>

#include "attention_check.h"

namespace flashvision::testing {
namespace {

class Features : public ::testing::TestWithParam<DType> {
 protected:
  /// A mid-sized dense case in the test's dtype.
  AttentionCase base(int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim) const {
    return dense_case(GetParam(), seqlen_q, seqlen_k, head_dim);
  }

  /// Varlen lengths with a single-row sequence, one long sequence, an empty query sequence whose
  /// keys nobody sees, and a sequence whose causal rows partly see nothing (64 queries, 33 keys).
  AttentionCase varlen(int64_t heads, int64_t heads_kv, bool causal) const {
    AttentionCase c;
    c.dtype = GetParam();
    c.seqlens_q = {1, 5, 300, 0, 64, 7};
    c.seqlens_k = {1, 17, 300, 5, 33, 7};
    c.heads = heads;
    c.heads_kv = heads_kv;
    c.head_dim = 40;
    c.causal = causal;
    return c;
  }
};

TEST_P(Features, GroupedQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = base(61, 150, 64);
    c.heads = 4;
    c.heads_kv = 2;
    c.causal = causal;
    check_backward(cpu_target(), c);
  }
}

TEST_P(Features, MultiQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = base(150, 61, 64);
    c.heads = 4;
    c.heads_kv = 1;
    c.causal = causal;
    check_backward(cpu_target(), c);
  }
}

TEST_P(Features, Varlen) { check_backward(cpu_target(), varlen(2, 2, false)); }

TEST_P(Features, VarlenCausalGqa) { check_backward(cpu_target(), varlen(4, 2, true)); }

TEST_P(Features, VarlenMqaTorchLayoutPadded) {
  AttentionCase c = varlen(4, 1, true);
  c.layout = Layout::torch;
  c.row_pad = 8;
  check_backward(cpu_target(), c);
}

TEST_P(Features, VarlenQueriesWithoutKeys) {
  // Non-causal rows of a sequence with no keys see nothing: out 0, lse -inf, dq 0.
  AttentionCase c;
  c.dtype = GetParam();
  c.seqlens_q = {4, 9, 3};
  c.seqlens_k = {6, 0, 2};
  c.heads = c.heads_kv = 2;
  c.head_dim = 64;
  check_backward(cpu_target(), c);
}

TEST_P(Features, CausalFewerQueriesThanKeys) {
  AttentionCase c = base(50, 130, 64);
  c.causal = true;
  check_backward(cpu_target(), c);
}

TEST_P(Features, CausalSquare) {
  AttentionCase c = base(111, 111, 64);
  c.causal = true;
  check_backward(cpu_target(), c);
}

TEST_P(Features, CausalMoreQueriesThanKeys) {
  // Bottom-right alignment: the first 80 query rows see no key.
  AttentionCase c = base(130, 50, 64);
  c.causal = true;
  check_backward(cpu_target(), c);
}

TEST_P(Features, Layouts) {
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    AttentionCase c = base(100, 120, 72);
    c.layout = layout;
    check_backward(cpu_target(), c);
  }
}

TEST_P(Features, PaddedRowStrides) {
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    for (const int64_t pad : {8, 3}) {  // 3: rows that are not vector-aligned
      AttentionCase c = base(70, 90, 80);
      c.layout = layout;
      c.row_pad = pad;
      c.causal = pad == 3;
      check_backward(cpu_target(), c);
    }
  }
}

TEST_P(Features, SoftmaxScale) {
  for (const float scale : {0.3f, 1.7f}) {
    AttentionCase c = base(65, 80, 32);
    c.softmax_scale = scale;
    check_backward(cpu_target(), c);
  }
}

TEST_P(Features, ForwardWithoutLse) {
  for (const bool causal : {false, true}) {
    AttentionCase c = base(90, 70, 96);
    c.causal = causal;
    c.with_lse = false;
    check_forward(cpu_target(), c);
  }
}

TEST_P(Features, VarlenForwardWithoutLse) {
  AttentionCase c = varlen(4, 2, true);
  c.with_lse = false;
  check_forward(cpu_target(), c);
}

TEST_P(Features, AutomaticBackendPicksCpuForHostTensors) {
  AttentionCase c = base(33, 45, 64);
  Target target = cpu_target();
  target.backend = target.backward_backend = Backend::automatic;
  check_backward(target, c);
}

INSTANTIATE_TEST_SUITE_P(All, Features, ::testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const auto& point) { return std::string(to_string(point.param)); });

}  // namespace
}  // namespace flashvision::testing
