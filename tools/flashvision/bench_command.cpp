// `flashvision bench`: picks the device and defaults, runs the cases, prints and saves results.
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>

#include <omp.h>

#include "bench_runner.h"
#include "cli_options.h"
#include "commands.h"
#include "flashvision/flashvision.h"
#include "results_json.h"
#include "run_meta.h"
#include "table_printer.h"

namespace flashvision::tool {

namespace {

constexpr double kDefaultBudgetSeconds = 2.5;
constexpr double kQuickBudgetSeconds = 1.0;

bool library_has_cuda() {
  for (const Backend b : compiled_backends()) {
    if (b == Backend::cuda_sm80 || b == Backend::cuda_sm90) return true;
  }
  return false;
}

/// The device --device names; "auto" takes the GPU when this build and machine have one.
std::unique_ptr<BenchDevice> open_device(const BenchOptions& options) {
  switch (options.device) {
    case DeviceChoice::cpu: return make_cpu_device(options.threads);
    case DeviceChoice::cuda: return make_cuda_device(0);
    case DeviceChoice::automatic:
      if (library_has_cuda()) {
        try {
          return make_cuda_device(0);
        } catch (const Error&) {
          // No usable GPU: the CPU is the answer "auto" gives then.
        }
      }
      return make_cpu_device(options.threads);
  }
  return make_cpu_device(options.threads);
}

void print_case_list(std::ostream& out) {
  out << std::left << std::setw(18) << "case" << std::setw(22) << "BxHxNqxNkxD"
      << "what\n";
  for (const BenchCase& c : bench_cases()) {
    out << std::setw(18) << c.name << std::setw(22) << format_shape(c.shape) << c.what << '\n';
  }
}

RunSettings make_settings(const BenchOptions& options, const BenchDevice& device) {
  const DeviceDefaults defaults = device.defaults();
  RunSettings settings;
  settings.dtype = options.dtype.value_or(defaults.dtype);
  settings.causal = options.causal;
  settings.backward = options.backward;
  settings.naive = options.naive;
  settings.naive_cap_bytes = options.naive_cap_mb
                                 ? static_cast<int64_t>(*options.naive_cap_mb * (1 << 20))
                                 : defaults.naive_cap_bytes;
  settings.measure.warmup = options.warmup.value_or(defaults.warmup);
  settings.measure.repeat = options.repeat.value_or(defaults.repeat);
  settings.measure.budget_s =
      options.budget_s.value_or(options.quick ? kQuickBudgetSeconds : kDefaultBudgetSeconds);
  settings.seed = options.seed;
  settings.kernel = options.kernel;
  settings.backward_kernel = options.backward_kernel;
  if (device.device() == Device::cpu) settings.threads = omp_get_max_threads();
  return settings;
}

void print_header(const BenchOptions& options, const RunSettings& s, const BenchDevice& device) {
  std::cout << "flashvision " << kVersion << " bench on " << to_string(device.device());
  if (s.threads) std::cout << " (" << *s.threads << (*s.threads == 1 ? " thread)" : " threads)");
  std::cout << ", dtype " << to_string(s.dtype)
            << (options.dtype ? "" : " (default for this device)") << (s.causal ? ", causal" : "")
            << ", passes " << (s.backward ? "fwd, fwd+bwd" : "fwd") << '\n';
  if (options.quick) {
    std::cout << "quick subset of image cases"
              << (device.device() == Device::cpu ? " (batch reduced on the CPU)" : "")
              << "; pick cases with --case NAME or --case all (see --list)\n";
  }
  std::cout << "each measurement: median of up to " << s.measure.repeat << " calls within "
            << s.measure.budget_s << " s after up to " << s.measure.warmup
            << " warm-up; naive = softmax(q k^T) v with fp32 S in memory, operands in "
            << to_string(device.naive_dtype(s.dtype)) << "\n\n";
}

}  // namespace

int run_bench(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  const BenchOptions options = parse_bench_options(args);
  if (options.help) {
    std::cout << bench_usage();
    return 0;
  }
  if (options.list) {
    print_case_list(std::cout);
    return 0;
  }
  const std::unique_ptr<BenchDevice> device = open_device(options);
  const RunSettings settings = make_settings(options, *device);
  const std::vector<BenchCase> cases =
      options.quick ? quick_cases(device->device() == Device::cpu) : options.cases;
  print_header(options, settings, *device);

  std::vector<BenchRecord> records;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseProgress progress{static_cast<int>(i + 1), static_cast<int>(cases.size())};
    for (BenchRecord& r : run_case(cases[i], settings, *device, progress))
      records.push_back(std::move(r));
  }
  print_table(std::cout, records);

  if (!options.json_path.empty()) {
    write_results_json(options.json_path, collect_run_meta(*device, argv, options.seed), records);
    std::cout << "results written to " << options.json_path << '\n';
  }

  int failures = 0;
  for (const BenchRecord& r : records) {
    if ((r.impl == "flashvision" && r.error) || record_failed_check(r)) ++failures;
  }
  if (failures > 0) {
    std::fprintf(stderr,
                 "flashvision bench: %d record(s) failed to run or exceeded the error tolerance\n",
                 failures);
    return 1;
  }
  return 0;
}

}  // namespace flashvision::tool
