// Deterministic backward on the CUDA backend: dq, dk, dv bitwise equal across runs, and correct.
#include <gtest/gtest.h>

#include <random>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuDeterministic : public GpuTest<> {};

TEST_F(GpuDeterministic, BackwardIsReproducibleAndMatchesReference) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr int64_t kBatch = 2, kHeads = 4, kHeadsKv = 2, kDim = 64, kNq = 300, kNk = 257;
  const DType dtype = DType::bf16;
  const Target target = cuda_target();
  auto operand = [&](int64_t rows, int64_t heads) {
    return make_operand(target, dtype, kBatch, rows, heads, kDim, Layout::flash, 0);
  };
  TestTensor q = operand(kNq, kHeads), k = operand(kNk, kHeadsKv), v = operand(kNk, kHeadsKv);
  TestTensor out = operand(kNq, kHeads), dout = operand(kNq, kHeads), dq = operand(kNq, kHeads);
  TestTensor dk = operand(kNk, kHeadsKv), dv = operand(kNk, kHeadsKv);
  TestTensor lse = make_lse(target, kBatch, kHeads, kNq, 0);

  RefProblem problem;
  problem.heads = kHeads;
  problem.heads_kv = kHeadsKv;
  problem.head_dim = kDim;
  problem.cu_seqlens_q = {0, kNq, 2 * kNq};
  problem.cu_seqlens_k = {0, kNk, 2 * kNk};
  problem.causal = true;
  problem.q = q.store(random_normal(rng, static_cast<std::size_t>(q.size())));
  problem.k = k.store(random_normal(rng, static_cast<std::size_t>(k.size())));
  problem.v = v.store(random_normal(rng, static_cast<std::size_t>(v.size())));
  const std::vector<double> dout_values =
      dout.store(random_normal(rng, static_cast<std::size_t>(dout.size())));

  ForwardArgs fwd;
  fwd.q = q.view();
  fwd.k = k.view();
  fwd.v = v.view();
  fwd.out = out.view();
  fwd.lse = lse.view();
  fwd.causal = true;
  fwd.backend = Backend::cuda_sm80;
  out.poison();
  lse.poison();
  forward(fwd);

  BackwardArgs bwd;
  bwd.q = q.view();
  bwd.k = k.view();
  bwd.v = v.view();
  bwd.out = out.view();
  bwd.lse = lse.view();
  bwd.dout = dout.view();
  bwd.dq = dq.view();
  bwd.dk = dk.view();
  bwd.dv = dv.view();
  bwd.causal = true;
  bwd.deterministic = true;
  bwd.backend = Backend::cuda_sm80;
  std::vector<TensorRead> runs[3];
  for (int attempt = 0; attempt < 2; ++attempt) {
    dq.poison();
    dk.poison();
    dv.poison();
    backward(bwd);
    runs[0].push_back(dq.read());
    runs[1].push_back(dk.read());
    runs[2].push_back(dv.read());
  }
  for (auto& pair : runs) EXPECT_EQ(pair[0].values, pair[1].values) << "not bitwise reproducible";

  RefForward ref = reference_forward(problem);
  ref.out = out.read().values;
  const RefGrads grads = reference_backward(problem, ref, dout_values);
  const Tolerance tol = output_tolerance(dtype);
  EXPECT_TRUE(matches_reference("dq", runs[0][0], grads.dq, tol));
  EXPECT_TRUE(matches_reference("dk", runs[1][0], grads.dk, tol));
  EXPECT_TRUE(matches_reference("dv", runs[2][0], grads.dv, tol));
}

}  // namespace
}  // namespace flashvision::testing
