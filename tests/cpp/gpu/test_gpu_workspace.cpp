// The backward's caller-provided workspace (BackwardArgs::workspace): the size query, results
// equal to the reference with the caller's buffer (with split partials), and the error for a
// buffer smaller than the call needs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuWorkspace : public GpuTest<::testing::TestWithParam<int32_t>> {};

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
  constexpr int32_t kNq = 1500;
  constexpr int64_t kHeads = 4, kDim = 64;
  AttentionCase c;
  c.dtype = DType::bf16;
  c.seqlens_q = {kNq, kNq};
  c.seqlens_k = {GetParam(), GetParam()};
  c.heads = kHeads;
  c.heads_kv = 2;
  c.head_dim = kDim;
  CheckOptions options;
  options.run_backward = [](AttentionRun& run) {
    const std::size_t bytes = run.backward_workspace_bytes();
    // At least the fp32 dQ accumulator and rowsum(dO * O).
    ASSERT_GE(bytes, static_cast<std::size_t>(2 * kNq * kHeads * (kDim + 1)) * 4);
    // A buffer poisoned with NaN bytes: the call must clear what it accumulates into.
    DeviceBuffer workspace(bytes);
    ASSERT_EQ(cudaMemset(workspace.ptr, 0xff, bytes), cudaSuccess);
    try {
      run.backward(workspace.ptr, bytes - 256);
      ADD_FAILURE() << "a workspace 256 bytes too small was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("workspace_bytes is " + std::to_string(bytes - 256) +
                                           " but this backward call needs " +
                                           std::to_string(bytes)),
                std::string::npos)
          << e.what();
    }
    run.backward(workspace.ptr, bytes);
  };
  check_backward(cuda_target(CudaKernel::sm80), c, options);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuWorkspace, ::testing::Values(77, 1000),
                         [](const ::testing::TestParamInfo<int32_t>& param) {
                           return "nk" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace flashvision::testing
