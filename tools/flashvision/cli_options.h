// Command-line options of `flashvision bench`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cases.h"
#include "flashvision/args.h"
#include "flashvision/tensor.h"

namespace flashvision::tool {

/// A malformed command line; main() prints it and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Which device --device asked for.
enum class DeviceChoice { automatic, cpu, cuda };

/// Everything `flashvision bench` was asked to do. Unset optionals take the device's defaults.
struct BenchOptions {
  std::vector<BenchCase> cases;  ///< --case and --shape, in command-line order
  bool quick = false;            ///< neither --case nor --shape: run the quick subset
  DeviceChoice device = DeviceChoice::automatic;
  std::optional<DType> dtype;  ///< default: bf16 on cuda, f32 on cpu
  bool causal = false;
  bool backward = false;               ///< also time forward+backward
  std::string json_path;               ///< empty: no JSON file
  std::optional<int> repeat;           ///< most timed calls per measurement
  std::optional<int> warmup;           ///< most warm-up calls per measurement
  std::optional<double> budget_s;      ///< time budget of one measurement, seconds
  int threads = 0;                     ///< CPU threads (0: all)
  std::optional<double> naive_cap_mb;  ///< largest naive S buffer to attempt
  bool naive = true;                   ///< false with --no-naive
  Backend kernel = Backend::automatic;  ///< --kernel: the forward kernel to force on cuda
  /// --backward-kernel: the backward kernel to force on cuda
  Backend backward_kernel = Backend::automatic;
  uint64_t seed = 1;                   ///< seed of the random inputs
  bool list = false;                   ///< --list: print the cases and exit
  bool help = false;                   ///< --help: print usage and exit
};

/// Parses the arguments that follow "bench"; throws UsageError naming the bad flag.
BenchOptions parse_bench_options(std::span<const std::string> args);

/// The --help text of `flashvision bench`.
std::string bench_usage();

}  // namespace flashvision::tool
