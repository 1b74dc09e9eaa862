// The CUDA target of the test suite: device memory, the sm80 backend forced, the default stream.
#pragma once

#include <gtest/gtest.h>

#include "target.h"

namespace flashvision::testing {

/// GPU 0 with Backend::cuda_sm80; buffers are cudaMalloc'ed and copied with blocking cudaMemcpy
/// after a device synchronize (so downloads see all queued work).
Target cuda_target();

/// Number of CUDA devices visible to the tests (0 without driver or GPU).
int gpu_count();

/// Base of GPU tests: skips the test with a clear message when there is no GPU.
template <typename Base = ::testing::Test>
class GpuTest : public Base {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no CUDA device found: GPU test skipped";
  }
};

}  // namespace flashvision::testing
