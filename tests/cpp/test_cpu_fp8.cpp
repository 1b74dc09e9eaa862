// The CPU backend's FP8 (e4m3) forward against the float64 reference of the stored values times
// their descales: it rounds only O to bf16, so it is held to the bf16 tolerance (the GPU's FP8
// kernel, which rounds P to e4m3 as well, gets a wider one).
#include <gtest/gtest.h>

#include "attention_check.h"

namespace flashvision::testing {
namespace {

CheckOptions bf16_output() {
  CheckOptions options;
  options.tolerance = output_tolerance(DType::bf16);
  return options;
}

TEST(CpuFp8, HeadDimsAndLengths) {
  for (const int64_t d : {8, 40, 64, 80, 128, 160, 256}) {
    for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{1, 1}, {77, 300}, {197, 197}}) {
      SCOPED_TRACE("D " + std::to_string(d));
      check_forward(cpu_target(), dense_case(DType::f8e4m3, nq, nk, d), bf16_output());
    }
  }
}

TEST(CpuFp8, GroupedHeadsLayoutsCausalDescales) {
  AttentionCase c = dense_case(DType::f8e4m3, 133, 217, 64);
  c.heads = 6;
  c.heads_kv = 2;
  c.layout = Layout::torch;
  c.row_pad = 3;
  c.descale_q = 0.37f;
  c.descale_k = 1.9f;
  c.descale_v = 0.25f;
  check_forward(cpu_target(), c, bf16_output());
  c.causal = true;
  c.layout = Layout::flash;
  check_forward(cpu_target(), c, bf16_output());
  c.with_lse = false;
  c.softmax_scale = 0.05f;
  check_forward(cpu_target(), c, bf16_output());
}

TEST(CpuFp8, TheAutomaticBackendTakesIt) {
  Target automatic = cpu_target();
  automatic.backend = Backend::automatic;
  check_forward(automatic, dense_case(DType::f8e4m3, 64, 64, 32), bf16_output());
}

}  // namespace
}  // namespace flashvision::testing
