// Numerically hard inputs: huge scores, rows whose scores are all hugely negative, tiny head dims.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attention_check.h"

namespace flashvision::testing {
namespace {

class Numerics : public ::testing::TestWithParam<DType> {
 protected:
  AttentionCase base(int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim) const {
    return dense_case(GetParam(), seqlen_q, seqlen_k, head_dim);
  }

  /// The standard tolerance, loosened to at least `floor`.
  Tolerance at_least(Tolerance floor) const {
    const Tolerance t = output_tolerance(GetParam());
    return {std::max(t.atol, floor.atol), std::max(t.rtol, floor.rtol)};
  }
};

TEST_P(Numerics, HugeScores) {
  // Scores of order 1e4: exp() overflows unless the row max is subtracted first. q and k are
  // integers below 128 and the scale a power of two, so every score is exact in float32 (and the
  // inputs in f16/bf16) whatever the summation order, and near ties within a row cost nothing.
  // What remains is inherent to float32 at this magnitude: a backend may fold scale * log2(e)
  // into one multiply of a ~2e4 score (ulp 2e-3) and the float32 lse has an ulp of 1e-3, so each
  // recomputed probability may be off by ~1e-3 relative; the few dominant terms of dv, dk and dq
  // add such errors up. The forward's normalization cancels most of it.
  for (const bool causal : {false, true}) {
    AttentionCase c = base(128, 150, 64);
    c.causal = causal;
    c.softmax_scale = 0.0625f;
    CheckOptions options;
    options.shape_inputs = [](RefProblem& p) {
      for (auto* x : {&p.q, &p.k}) {
        for (double& e : *x) e = std::clamp(std::round(e * 100), -127.0, 127.0);
      }
    };
    options.tolerance = at_least({1e-4, 2e-3});
    check_forward(cpu_target(), c, options);
    options.tolerance = at_least({1e-4, 1e-2});
    check_backward(cpu_target(), c, options);
  }
}

/// Makes every score of the even query rows about -300 while keeping their spread of order 1:
/// all keys get +41 in dim 0, even rows get -41 there and odd rows 0. exp(-300) is 0 in float32,
/// so a softmax without the max subtraction divides 0 by 0.
void push_even_rows_far_negative(RefProblem& p) {
  constexpr double kShift = 41.0;  // exact in f16 and bf16; 41^2 / sqrt(32) ~ 297
  const int64_t d = p.head_dim;
  for (std::size_t i = 0; i < p.k.size(); i += static_cast<std::size_t>(d)) p.k[i] = kShift;
  const int64_t vectors = static_cast<int64_t>(p.q.size()) / d;
  for (int64_t i = 0; i < vectors; ++i) {
    const int64_t row = i / p.heads;
    p.q[static_cast<std::size_t>(i * d)] = row % 2 == 0 ? -kShift : 0.0;
  }
}

TEST_P(Numerics, AllScoresFarNegative) {
  // Scores are float32 sums around -1681 (ulp 1.2e-4), so probabilities carry ~2e-5 relative
  // error. The gradients along the shared direction (dim 0) are ill-conditioned: softmax ignores a
  // shift common to all keys, so the exact dq[0] and dk[0] come from cancellation, and every
  // relative error in the probabilities returns multiplied by 41 * scale * rowsum(dout * out).
  for (const bool causal : {false, true}) {
    AttentionCase c = base(96, 80, 32);
    c.causal = causal;
    CheckOptions options;
    options.shape_inputs = push_even_rows_far_negative;
    options.tolerance = at_least({1e-5, 2e-4});
    check_forward(cpu_target(), c, options);
    options.tolerance = at_least({1e-3, 1e-2});
    check_backward(cpu_target(), c, options);
  }
}

TEST_P(Numerics, NegativeScale) {
  // With a negative scale the largest scaled score is the smallest raw one: a softmax that
  // subtracts the raw max instead exponentiates |scale| * spread * log2(e), about 6 * 28 * 1.44
  // ~ 240 here (random scores at head dim 32 spread over about +-14 in a row of 130 keys), and
  // overflows float32. The scale also multiplies the float32 rounding of each score (about 5e-6
  // here) into the exponent, so probabilities carry a few 1e-5 relative error, which the few
  // dominant terms of dv add up: float32 needs more than its standard 2e-5 (seen: 4.6e-5 on one
  // seed in CI).
  for (const bool causal : {false, true}) {
    AttentionCase c = base(100, 130, 32);
    c.causal = causal;
    c.softmax_scale = -6.0f;
    CheckOptions options;
    options.tolerance = at_least({1e-5, 1e-4});
    check_backward(cpu_target(), c, options);
  }
}

TEST_P(Numerics, TinyHeadDims) {
  for (const int64_t dim : {1, 3}) {
    for (const bool causal : {false, true}) {
      AttentionCase c = base(33, 47, dim);
      c.causal = causal;
      check_backward(cpu_target(), c);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Numerics, ::testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const auto& point) { return std::string(to_string(point.param)); });

}  // namespace
}  // namespace flashvision::testing
