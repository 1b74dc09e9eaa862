// One row of the results: one implementation, one pass, one case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench_cases.h"
#include "flashvision/tensor.h"

namespace flashvision::tool {

/// A record of the results file (shared/BENCH.md), plus the repetition count, thread count and
/// per-gradient errors this tool adds.
struct BenchRecord {
  std::string case_name;
  Shape shape;
  DType dtype = DType::f32;
  bool causal = false;
  Device device = Device::cpu;
  std::string impl;                   ///< "flashvision" or "naive"
  std::optional<std::string> kernel;  ///< flashvision only: the kernel that ran (selected_kernel)
  std::string pass;                   ///< "fwd" or "fwd+bwd"
  std::optional<double> ms;           ///< median time of one call
  std::optional<double> tflops;       ///< FLOPs of the pass / median time, in TFLOP/s
  std::optional<int64_t> peak_bytes;  ///< peak extra memory of one call
  std::optional<double> max_err;      ///< largest absolute error over every checked output
  std::optional<double> max_err_dq;   ///< fwd+bwd: dq on the sampled query rows
  std::optional<double> max_err_dk;   ///< fwd+bwd: dk on sampled keys (null when too costly)
  std::optional<double> max_err_dv;   ///< fwd+bwd: dv on sampled keys (null when too costly)
  int reps = 0;                       ///< timed calls behind the median
  std::optional<int> threads;         ///< CPU threads
  std::optional<std::string> error;   ///< why it did not run
  std::string note;                   ///< e.g. a reduced batch
};

/// Largest error that still counts as correct for a dtype (loose: catches bugs, not rounding).
inline double error_tolerance(DType dtype) { return dtype == DType::f32 ? 1e-3 : 5e-2; }

/// True when a record ran but produced non-finite or out-of-tolerance values.
inline bool record_failed_check(const BenchRecord& r) {
  for (const std::optional<double>& err : {r.max_err, r.max_err_dq, r.max_err_dk, r.max_err_dv}) {
    if (err && !(*err <= error_tolerance(r.dtype))) return true;
  }
  return false;
}

}  // namespace flashvision::tool
