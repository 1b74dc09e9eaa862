// Tests of the test machinery itself: the float64 reference (against finite differences), the
// 16-bit converters and the strided test tensors. If these fail, no other result means anything.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "attention_check.h"
#include "float_formats.h"
#include "reference.h"
#include "test_support.h"

namespace flashvision::testing {
namespace {

double loss(const RefProblem& p, const std::vector<double>& dout) {
  const RefForward f = reference_forward(p);
  double sum = 0.0;
  for (std::size_t i = 0; i < dout.size(); ++i) sum += dout[i] * f.out[i];
  return sum;
}

/// Central differences of loss = sum(dout * out) with respect to every element of `x`.
std::vector<double> numeric_gradient(RefProblem p, std::vector<double> RefProblem::*x,
                                     const std::vector<double>& dout) {
  constexpr double kStep = 1e-5;
  std::vector<double> grad((p.*x).size());
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const double saved = (p.*x)[i];
    (p.*x)[i] = saved + kStep;
    const double up = loss(p, dout);
    (p.*x)[i] = saved - kStep;
    const double down = loss(p, dout);
    (p.*x)[i] = saved;
    grad[i] = (up - down) / (2 * kStep);
  }
  return grad;
}

void expect_close(const char* name, const std::vector<double>& got,
                  const std::vector<double>& want) {
  TensorRead read;
  read.values = got;
  // Central differences with h = 1e-5 are accurate to ~1e-9 on inputs of order 1.
  EXPECT_TRUE(matches_reference(name, read, want, {1e-8, 1e-7}));
}

class ReferenceGradient : public ::testing::TestWithParam<bool> {};

TEST_P(ReferenceGradient, MatchesFiniteDifferences) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  AttentionCase c;
  c.seqlens_q = {3, 0, 4, 2, 3};  // varlen with an empty query sequence and one with no keys
  c.seqlens_k = {4, 2, 2, 3, 0};
  c.heads = 2;
  c.heads_kv = 1;
  c.head_dim = 5;
  c.causal = GetParam();
  c.softmax_scale = 0.7f;
  CaseInputs in = draw_inputs(c, rng);
  const RefForward forward = reference_forward(in.problem);
  const RefGrads grads = reference_backward(in.problem, forward, in.dout);
  expect_close("dq", grads.dq, numeric_gradient(in.problem, &RefProblem::q, in.dout));
  expect_close("dk", grads.dk, numeric_gradient(in.problem, &RefProblem::k, in.dout));
  expect_close("dv", grads.dv, numeric_gradient(in.problem, &RefProblem::v, in.dout));
}

INSTANTIATE_TEST_SUITE_P(Reference, ReferenceGradient, ::testing::Values(false, true),
                         [](const auto& point) { return point.param ? "causal" : "full"; });

TEST(Reference, MaskedRowsAreZeroWithMinusInfinityLse) {
  RefProblem p;
  p.head_dim = 2;
  p.causal = true;
  p.cu_seqlens_q = {0, 3};
  p.cu_seqlens_k = {0, 1};
  p.q = {1, 2, 3, 4, 5, 6};
  p.k = {0.5, -1};
  p.v = {7, 8};
  const RefForward f = reference_forward(p);
  // Bottom-right alignment: with 3 queries and 1 key only the last row sees the key.
  EXPECT_EQ(f.lse[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(f.lse[1], -std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(f.lse[2], (5 * 0.5 - 6) / std::sqrt(2.0));
  EXPECT_EQ(f.out[0], 0.0);
  EXPECT_EQ(f.out[3], 0.0);
  EXPECT_DOUBLE_EQ(f.out[4], 7.0);
  EXPECT_DOUBLE_EQ(f.out[5], 8.0);
}

TEST(FloatFormats, F16RoundsToNearestEven) {
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);             // tie rounds to even: infinity
  EXPECT_EQ(float_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);      // tie to even (down)
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie to even (up)
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001);             // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000);             // tie to even: zero
  EXPECT_EQ(float_to_f16_bits(3 * 0x1p-26f), 0x0001);
  EXPECT_EQ(float_to_f16_bits(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(float_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(std::nanf("")))));
}

TEST(FloatFormats, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(float_to_bf16_bits(-3.0f), 0xc040);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
}

TEST(FloatFormats, EveryFiniteBitPatternRoundTrips) {
  int f16_mismatches = 0, bf16_mismatches = 0;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    if ((b & 0x7c00) != 0x7c00 && float_to_f16_bits(f16_bits_to_float(b)) != b) ++f16_mismatches;
    if ((b & 0x7f80) != 0x7f80 && float_to_bf16_bits(bf16_bits_to_float(b)) != b) ++bf16_mismatches;
  }
  EXPECT_EQ(f16_mismatches, 0);
  EXPECT_EQ(bf16_mismatches, 0);
}

TEST(TestTensor, LayoutsDescribeTheSameLogicalTensor) {
  const Target target = cpu_target();
  std::mt19937_64 rng(test_seed());
  const std::vector<double> values = random_normal(rng, 2 * 5 * 3 * 4);
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    for (const int64_t pad : {0, 3}) {
      SCOPED_TRACE(std::string(to_string(layout)) + " pad=" + std::to_string(pad));
      TestTensor t = make_operand(target, DType::bf16, 2, 5, 3, 4, layout, pad);
      const std::vector<double> stored = t.store(values);
      const TensorRead back = t.read();
      EXPECT_EQ(back.values, stored);
      EXPECT_EQ(back.unwritten, 0);
      EXPECT_EQ(back.stray_writes, 0);
      const TensorView v = t.view();
      EXPECT_EQ(v.stride[3], 1);
      EXPECT_EQ(v.stride[1], layout == Layout::flash ? 3 * 4 + pad : 4 + pad);
      EXPECT_EQ(v.stride[2], layout == Layout::flash ? 4 : 5 * (4 + pad));
      // Element (b=1, n=2, h=1, d=3) in canonical order sits at its strided address.
      const std::size_t canonical = ((1 * 5 + 2) * 3 + 1) * 4 + 3;
      const auto* raw =
          static_cast<const uint16_t*>(v.data) + v.stride[0] + 2 * v.stride[1] + v.stride[2] + 3;
      EXPECT_EQ(bf16_bits_to_float(*raw), stored[canonical]);
    }
  }
}

TEST(TestTensor, DetectsUnwrittenAndStrayElements) {
  const Target target = cpu_target();
  TestTensor t = make_operand(target, DType::f32, 1, 2, 1, 8, Layout::flash, 4);
  t.poison();
  TensorRead r = t.read();
  EXPECT_EQ(r.unwritten, 16);
  EXPECT_EQ(r.stray_writes, 0);
  std::mt19937_64 rng(test_seed());
  t.store(random_normal(rng, 16));
  // A write into the padding after row 0 must be caught.
  static_cast<float*>(t.view().data)[8] = 1.0f;
  r = t.read();
  EXPECT_EQ(r.unwritten, 0);
  EXPECT_EQ(r.stray_writes, 1);
}

}  // namespace
}  // namespace flashvision::testing
