// Sweep definitions.
#include "sweep_cases.h"

namespace flashvision::testing {

const std::vector<int64_t>& sweep_head_dims() {
  static const std::vector<int64_t> dims{8, 40, 64, 72, 80, 96, 128, 160, 256, 512};
  return dims;
}

const std::vector<std::pair<int64_t, int64_t>>& sweep_lengths() {
  static const std::vector<std::pair<int64_t, int64_t>> lengths{
      {1, 1}, {7, 3}, {197, 197}, {256, 77}, {577, 577}, {1023, 1025}};
  return lengths;
}

std::vector<SweepPoint> f32_sweep() {
  std::vector<SweepPoint> points;
  for (const bool causal : {false, true}) {
    for (const int64_t d : sweep_head_dims()) {
      for (const auto& [nq, nk] : sweep_lengths()) {
        points.push_back({DType::f32, d, nq, nk, causal});
      }
    }
  }
  return points;
}

std::vector<SweepPoint> low_precision_sweep() {
  std::vector<SweepPoint> points;
  for (const DType dtype : {DType::bf16, DType::f16}) {
    for (const int64_t d : sweep_head_dims()) {
      points.push_back({dtype, d, 7, 3, false});
      points.push_back({dtype, d, 256, 77, true});
    }
    for (const auto& [nq, nk] : sweep_lengths()) {
      if (nq != 256) points.push_back({dtype, 64, nq, nk, true});  // (256, 77) is already above
    }
  }
  return points;
}

AttentionCase sweep_case(const SweepPoint& point) {
  AttentionCase c;
  c.dtype = point.dtype;
  c.head_dim = point.head_dim;
  c.seqlen_q = point.seqlen_q;
  c.seqlen_k = point.seqlen_k;
  c.causal = point.causal;
  c.layout = point.causal ? Layout::torch : Layout::flash;
  // Two sequences and two heads exercise every stride; the long cases keep one of each so the
  // float64 reference stays fast.
  const bool long_case = point.seqlen_q * point.seqlen_k > 200'000;
  c.batch = long_case ? 1 : 2;
  c.heads = c.heads_kv = long_case && point.head_dim > 128 ? 1 : 2;
  return c;
}

std::string sweep_name(const SweepPoint& point) {
  return std::string(to_string(point.dtype)) + "_D" + std::to_string(point.head_dim) + "_" +
         std::to_string(point.seqlen_q) + "x" + std::to_string(point.seqlen_k) +
         (point.causal ? "_causal" : "");
}

void PrintTo(const SweepPoint& point, std::ostream* os) { *os << sweep_name(point); }

}  // namespace flashvision::testing
