// Runs one benchmark case: flashvision and the naive baseline, timed and checked.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bench_cases.h"
#include "bench_device.h"
#include "bench_record.h"
#include "flashvision/args.h"
#include "measure.h"

namespace flashvision::tool {

/// What every case of one bench run shares.
struct RunSettings {
  DType dtype = DType::f32;
  bool causal = false;
  bool backward = false;        ///< also time and check forward+backward
  bool naive = true;            ///< run the naive baseline
  int64_t naive_cap_bytes = 0;  ///< skip the naive path when its score buffers would pass this
  MeasureSettings measure;
  uint64_t seed = 1;
  std::optional<int> threads;  ///< CPU threads (recorded, and passed to flashvision)
  Backend kernel = Backend::automatic;  ///< forward backend forced on cuda (--kernel)
  Backend backward_kernel = Backend::automatic;  ///< backward backend forced on cuda
};

/// Position of a case in the run, for progress lines ("[3/12]").
struct CaseProgress {
  int index = 0;
  int total = 0;
};

/// Records of one case: flashvision fwd (and fwd+bwd), then naive fwd (and fwd+bwd) unless
/// disabled. Failures of one implementation become records with `error`; they never throw.
std::vector<BenchRecord> run_case(const BenchCase& bench_case, const RunSettings& settings,
                                  BenchDevice& device, CaseProgress progress);

}  // namespace flashvision::tool
