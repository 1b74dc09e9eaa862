// Forward and backward against the float64 reference over head dims x sequence lengths.
#include <gtest/gtest.h>

#include "sweep_cases.h"

namespace flashvision::testing {
namespace {

class ForwardSweep : public ::testing::TestWithParam<SweepPoint> {};
class BackwardSweep : public ::testing::TestWithParam<SweepPoint> {};

TEST_P(ForwardSweep, MatchesReference) { check_forward(cpu_target(), sweep_case(GetParam())); }
TEST_P(BackwardSweep, MatchesReference) { check_backward(cpu_target(), sweep_case(GetParam())); }

std::string point_name(const ::testing::TestParamInfo<SweepPoint>& info) {
  return sweep_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(F32, ForwardSweep, ::testing::ValuesIn(f32_sweep()), point_name);
INSTANTIATE_TEST_SUITE_P(F32, BackwardSweep, ::testing::ValuesIn(f32_sweep()), point_name);
INSTANTIATE_TEST_SUITE_P(LowPrecision, ForwardSweep, ::testing::ValuesIn(low_precision_sweep()),
                         point_name);
INSTANTIATE_TEST_SUITE_P(LowPrecision, BackwardSweep, ::testing::ValuesIn(low_precision_sweep()),
                         point_name);

}  // namespace
}  // namespace flashvision::testing
