// The backward's caller-provided workspace (BackwardArgs::workspace): the size query, results
// equal to the reference with the caller's buffer (with split partials), and the error for a
// buffer smaller than the call needs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuWorkspace : public GpuTest<::testing::TestWithParam<int64_t>> {};

/// Device memory freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Both grids are small (4 and 32 key-block CTAs), so the query blocks split over CTAs and the
// partial dK/dV live in the workspace after dQ: many splits at Nk = 77, fewer at Nk = 1000.
TEST_P(GpuWorkspace, CallerBufferMatchesReference) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t nk = GetParam();
  constexpr int64_t kBatch = 2, kHeads = 4, kHeadsKv = 2, kDim = 64, kNq = 1500;
  const DType dtype = DType::bf16;
  const Target target = cuda_target();
  auto operand = [&](int64_t rows, int64_t heads) {
    return make_operand(target, dtype, kBatch, rows, heads, kDim, Layout::flash, 0);
  };
  TestTensor q = operand(kNq, kHeads), k = operand(nk, kHeadsKv), v = operand(nk, kHeadsKv);
  TestTensor out = operand(kNq, kHeads), dout = operand(kNq, kHeads), dq = operand(kNq, kHeads);
  TestTensor dk = operand(nk, kHeadsKv), dv = operand(nk, kHeadsKv);
  TestTensor lse = make_lse(target, kBatch, kHeads, kNq, 0);

  RefProblem problem;
  problem.heads = kHeads;
  problem.heads_kv = kHeadsKv;
  problem.head_dim = kDim;
  problem.cu_seqlens_q = {0, kNq, 2 * kNq};
  problem.cu_seqlens_k = {0, nk, 2 * nk};
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
  const std::size_t bytes = backward_workspace_size(bwd);
  // At least the fp32 dQ accumulator and rowsum(dO * O).
  ASSERT_GE(bytes, static_cast<std::size_t>(kBatch * kNq * kHeads * (kDim + 1)) * 4);

  // A buffer poisoned with NaN bytes: the call must clear what it accumulates into.
  DeviceBuffer workspace(bytes);
  ASSERT_EQ(cudaMemset(workspace.ptr, 0xff, bytes), cudaSuccess);
  bwd.workspace = workspace.ptr;
  bwd.workspace_bytes = bytes;
  dq.poison();
  dk.poison();
  dv.poison();
  backward(bwd);

  RefForward ref = reference_forward(problem);
  ref.out = out.read().values;
  const RefGrads grads = reference_backward(problem, ref, dout_values);
  const Tolerance tol = output_tolerance(dtype);
  EXPECT_TRUE(matches_reference("dq", dq.read(), grads.dq, tol));
  EXPECT_TRUE(matches_reference("dk", dk.read(), grads.dk, tol));
  EXPECT_TRUE(matches_reference("dv", dv.read(), grads.dv, tol));

  bwd.workspace_bytes = bytes - 256;
  try {
    backward(bwd);
    ADD_FAILURE() << "a workspace 256 bytes too small was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace_bytes is " + std::to_string(bytes - 256) +
                                         " but this backward call needs " +
                                         std::to_string(bytes)),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuWorkspace, ::testing::Values(77, 1000),
                         [](const ::testing::TestParamInfo<int64_t>& param) {
                           return "nk" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace flashvision::testing
