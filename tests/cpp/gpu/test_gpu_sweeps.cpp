// The CUDA backend against the float64 reference over head dims x sequence lengths, f16 and bf16,
// full and causal (causal points use the torch layout, so both layouts see every head dim).
// check_backward also checks the forward outputs (out and lse) of the same inputs.
#include <gtest/gtest.h>

#include "cuda_target.h"
#include "sweep_cases.h"

namespace flashvision::testing {
namespace {

/// Head dims of the GPU sweep: every compiled bucket and the in-between dims image models use.
const std::vector<int64_t>& gpu_head_dims() {
  static const std::vector<int64_t> dims{40, 64, 72, 80, 96, 128, 160, 256};
  return dims;
}

std::vector<SweepPoint> gpu_sweep() {
  std::vector<SweepPoint> points;
  for (const bool causal : {false, true}) {
    for (const int64_t d : gpu_head_dims()) {
      for (const auto& [nq, nk] : sweep_lengths()) points.push_back({DType::bf16, d, nq, nk, causal});
    }
  }
  for (const int64_t d : gpu_head_dims()) {
    points.push_back({DType::f16, d, 7, 3, false});
    points.push_back({DType::f16, d, 256, 77, true});
    points.push_back({DType::f16, d, 577, 577, false});
  }
  return points;
}

using SweepParam = std::tuple<SweepPoint, CudaKernel>;

class GpuSweep : public ::testing::TestWithParam<SweepParam> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(std::get<1>(GetParam()));
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(GpuSweep, ForwardBackwardMatchReference) {
  const SweepPoint& point = std::get<0>(GetParam());
  AttentionCase c = sweep_case(point);
  // Grouped heads on half of the points: the backward sums dK, dV over each group.
  if ((point.head_dim / 8 + point.seqlen_q) % 2 == 0 && c.heads == 2) c.heads_kv = 1;
  // On sm90 the backward (sm80) consumes the Hopper forward's out and lse, so both are checked.
  check_backward(cuda_target(std::get<1>(GetParam())), c);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSweep,
                         ::testing::Combine(::testing::ValuesIn(gpu_sweep()),
                                            ::testing::Values(CudaKernel::sm80, CudaKernel::sm90)),
                         [](const auto& point) {
                           return sweep_name(std::get<0>(point.param)) + "_" +
                                  to_string(std::get<1>(point.param));
                         });

}  // namespace
}  // namespace flashvision::testing
