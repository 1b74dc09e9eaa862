// The CUDA targets of the test suite: device memory, a CUDA kernel forced, the default stream.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "target.h"

namespace flashvision::testing {

/// The CUDA kernels a test forces. The Hopper backward serves some head dims and modes only: the
/// sm90 target's other backward calls run on sm80 (Target::backward_fallback).
enum class CudaKernel { sm80, sm90 };

const char* to_string(CudaKernel kernel);

/// GPU 0 with `kernel` forced; buffers are cudaMalloc'ed and copied with blocking cudaMemcpy
/// after a device synchronize (so downloads see all queued work).
Target cuda_target(CudaKernel kernel = CudaKernel::sm80);

/// Number of CUDA devices visible to the tests (0 without driver or GPU).
int gpu_count();

/// Why `kernel` cannot run here (no GPU; sm90 not compiled or not a compute capability 9.0
/// device), or empty when it can.
std::string kernel_unavailable(CudaKernel kernel);

/// Base of GPU tests: skips the test with a clear message when there is no GPU.
template <typename Base = ::testing::Test>
class GpuTest : public Base {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no CUDA device found: GPU test skipped";
  }
};

/// Base of tests run once per (dtype, kernel); skips where the kernel cannot run.
class GpuKernelTest : public ::testing::TestWithParam<std::tuple<DType, CudaKernel>> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(kernel());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DType dtype() const { return std::get<0>(GetParam()); }
  CudaKernel kernel() const { return std::get<1>(GetParam()); }
  Target target() const { return cuda_target(kernel()); }
};

/// Base of tests of the sm90 kernels run once per dtype; skips where they cannot run.
class GpuSm90Test : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(CudaKernel::sm90);
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DType dtype() const { return GetParam(); }
};

/// Test-name suffix of a dtype parameter, e.g. "bf16".
inline std::string dtype_name(const ::testing::TestParamInfo<DType>& info) {
  return flashvision::to_string(info.param);
}

/// bf16 and f16, each on sm80 and sm90.
inline auto dtype_kernel_values() {
  return ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                            ::testing::Values(CudaKernel::sm80, CudaKernel::sm90));
}

/// Test-name suffix of a (dtype, kernel) parameter, e.g. "bf16_sm90".
inline std::string dtype_kernel_name(
    const ::testing::TestParamInfo<std::tuple<DType, CudaKernel>>& info) {
  return std::string(flashvision::to_string(std::get<0>(info.param))) + "_" +
         to_string(std::get<1>(info.param));
}

}  // namespace flashvision::testing
