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

class GpuSweep : public GpuTest<::testing::TestWithParam<SweepPoint>> {};

TEST_P(GpuSweep, ForwardBackwardMatchReference) {
  AttentionCase c = sweep_case(GetParam());
  // Grouped heads on half of the points: the backward sums dK, dV over each group.
  if ((GetParam().head_dim / 8 + GetParam().seqlen_q) % 2 == 0 && c.heads == 2) c.heads_kv = 1;
  check_backward(cuda_target(), c);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSweep, ::testing::ValuesIn(gpu_sweep()),
                         [](const auto& point) { return sweep_name(point.param); });

}  // namespace
}  // namespace flashvision::testing
