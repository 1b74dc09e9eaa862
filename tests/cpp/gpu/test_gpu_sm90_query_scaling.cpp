// Q scaled in the sm90 forward's shared memory (FwdParams::q_prescaled, fwd_query_scaler.cuh) and
// the softmax's fast path for rows anchored at a max of 0 (stale_max_softmax.cuh). The choice is
// checked on its own; the GPU cases force the scaling on and off (FLASHVISION_SM90_FWD_PRESCALE)
// against the float64 reference: head dims of every tile family, several key blocks, causal
// masks, grouped heads, layouts, varlen batches, split tiles, clusters, the D = 512 slices, a
// scale past what the scaling takes, and scores whose rows leave the anchor's window.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kPrescaleVar = "FLASHVISION_SM90_FWD_PRESCALE";

constexpr float kD64Factor = static_cast<float>(M_LOG2E / 8.0);

TEST(Sm90QueryScalingChoice, InferenceOverLongKeySequencesTakesIt) {
  EXPECT_TRUE(sm90::fwd_q_prescaled(64, kD64Factor, 4096, 128, false, false));
  EXPECT_TRUE(sm90::fwd_q_prescaled(64, kD64Factor, 2 * 128 + 1, 128, false, false));
  EXPECT_TRUE(sm90::fwd_q_prescaled(64, kD64Factor, 577, 208, false, false));
  EXPECT_TRUE(sm90::fwd_q_prescaled(128, 1.0f, 1000, 176, false, false));
  EXPECT_TRUE(sm90::fwd_q_prescaled(48, kD64Factor, 4096, 128, false, false));
}

TEST(Sm90QueryScalingChoice, LseShortKeysOneBlockTilesWideHeadsAndLargeScalesDoNot) {
  // The LSE keeps the exact scale (a backward recomputes P from it).
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, kD64Factor, 4096, 128, false, true));
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, kD64Factor, 2 * 128, 128, false, false));
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, kD64Factor, 2 * 208, 208, false, false));
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, kD64Factor, 4096, 128, true, false));
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, kD64Factor, 4096, 0, false, false));
  EXPECT_FALSE(sm90::fwd_q_prescaled(160, kD64Factor, 4096, 128, false, false));
  EXPECT_FALSE(sm90::fwd_q_prescaled(256, kD64Factor, 4096, 80, false, false));
  // Q times more than 1 could overflow f16.
  EXPECT_FALSE(sm90::fwd_q_prescaled(64, 1.5f, 4096, 128, false, false));
}

class GpuSm90QueryScaling : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

/// `c` without the LSE: Q scaled in the kernel moves it by about a step of the scores' precision,
/// past lse_tolerance (the host scales Q only where no LSE is asked for).
AttentionCase without_lse(AttentionCase c) {
  c.with_lse = false;
  return c;
}

TEST_P(GpuSm90QueryScaling, ScaledAndUnscaledMatchTheReference) {
  for (const char* prescale : {"1", "0"}) {
    ScopedEnv env(kPrescaleVar, prescale);
    for (const int64_t dim : {40, 64, 80, 128, 160, 256}) {
      for (const int64_t nk : {int64_t{1}, int64_t{300}, int64_t{1000}}) {
        SCOPED_TRACE(std::string(kPrescaleVar) + "=" + prescale);
        check_forward(target(), without_lse(dense_case(dtype(), 200, nk, dim)));
      }
    }
  }
}

TEST_P(GpuSm90QueryScaling, CausalGroupedLayoutsVarlenAndScales) {
  ScopedEnv env(kPrescaleVar, "1");
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{300, 900}, {900, 300}}) {
    AttentionCase c = dense_case(dtype(), nq, nk, 128);
    c.causal = true;
    check_forward(target(), without_lse(c));
  }
  AttentionCase gqa = dense_case(dtype(), 200, 700, 64);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  gqa.layout = Layout::torch;
  gqa.row_pad = 8;
  check_forward(target(), without_lse(gqa));
  AttentionCase varlen = ragged_varlen_case(dtype(), 64);
  for (const bool causal : {false, true}) {
    varlen.causal = causal;
    check_forward(target(), without_lse(varlen));
  }
  // A scale whose factor passes 1 keeps Q as it is; a small one scales it.
  for (const float scale : {1.0f, 0.02f}) {
    AttentionCase c = dense_case(dtype(), 130, 700, 64);
    c.softmax_scale = scale;
    check_forward(target(), without_lse(c));
  }
}

TEST_P(GpuSm90QueryScaling, RowsLeavingTheAnchorsWindow) {
  // Rising by 48 the max passes the window's top (f16 8, bf16 32) a few blocks in; rising by
  // 2000 a block's exponentials against the anchor overflow; falling, the first block's max lies
  // far below later ones' or far above them. The first block (the sequence's last) is taken
  // against a max of 0 before its own is known (update_and_pack's first_at_zero): rising, its
  // sums pass the anchor's limit; falling, they fall below its floor; either way the exact path
  // takes it again. 577 keys: the narrow first block of bucket 64's short width.
  ScopedEnv env(kPrescaleVar, "1");
  check_forward_with_ramps(target(), without_lse(dense_case(dtype(), 130, 1000, 64)));
  check_forward_with_ramps(target(), without_lse(dense_case(dtype(), 130, 1000, 128)));
  check_forward_with_ramps(target(), without_lse(dense_case(dtype(), 130, 577, 64)));
}

TEST_P(GpuSm90QueryScaling, FirstBlocksBelowTheAnchorsFloor) {
  // Every score negative and large (q = -4|q|, k = 4|k|: about -650). Scaled by 0.125, about
  // -117 in log2 units: every row's first block lies under the anchor's floor (2^-64 a key in
  // bf16, 2^-6 in f16), and the exact path takes it again with the rows' own max. Scaled by
  // 0.001, about -1: the first block taken against a max of 0 holds.
  ScopedEnv env(kPrescaleVar, "1");
  for (const float scale : {0.001f, 0.125f}) {
    AttentionCase c = dense_case(dtype(), 130, 700, 64);
    c.softmax_scale = scale;
    CheckOptions options;
    options.shape_inputs = [](RefProblem& p) {
      for (double& x : p.q) x = -std::fabs(x) * 4.0;
      for (double& x : p.k) x = std::fabs(x) * 4.0;
    };
    check_forward(target(), without_lse(c), options);
  }
}

TEST_P(GpuSm90QueryScaling, SplitClustersAndWideTiles) {
  ScopedEnv env(kPrescaleVar, "1");
  {
    // The combine weighs the parts by their LSEs, which carry the same scaled scores.
    ScopedEnv split("FLASHVISION_SM90_FWD_SPLIT", "3");
    check_forward(target(), without_lse(dense_case(dtype(), 300, 1500, 128)));
  }
  {
    ScopedEnv multicast("FLASHVISION_SM90_FWD_MULTICAST", "1");
    check_forward(target(), without_lse(dense_case(dtype(), 512, 1000, 80)));
  }
  ScopedEnv rows("FLASHVISION_SM90_FWD_ROWS", "192");
  check_forward(target(), without_lse(dense_case(dtype(), 500, 1000, 64)));
}

TEST_P(GpuSm90QueryScaling, SeveralTilesPerCta) {
  ScopedEnv env(kPrescaleVar, "1");
  AttentionCase c = dense_case(dtype(), 700, 600, 64);
  c.batch = 4;
  c.heads = c.heads_kv = 40;
  check_forward(target(), without_lse(c));
}

TEST_P(GpuSm90QueryScaling, ChosenWithoutBeingAsked) {
  // SDXL's self-attention in miniature: the inference forward scales Q, the one that returns the
  // LSE keeps it exact (lse_tolerance).
  AttentionCase c = dense_case(dtype(), 1024, 1024, 64);
  c.heads = c.heads_kv = 10;
  c.layout = Layout::torch;
  check_forward(target(), without_lse(c));
  check_forward(target(), c);
}

TEST_P(GpuSm90QueryScaling, ABadValueIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 600, 64), kPrescaleVar, "2");
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90QueryScaling, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
