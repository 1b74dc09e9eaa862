#include "measure.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace flashvision::tool {

namespace {

constexpr int kMinReps = 3;
constexpr double kSlowCallMs = 1000.0;  // calls at least this long get a progress line each

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

void report_progress(const std::string& label, const char* what, int index, int total,
                     double last_ms) {
  std::fprintf(stderr, "%s %s %d/%d (last call %.1f s)\n", label.c_str(), what, index, total,
               last_ms / 1000.0);
  std::fflush(stderr);
}

}  // namespace

Measurement measure(BenchDevice& device, const std::function<void()>& call,
                    const MeasureSettings& settings, const std::string& label) {
  const double budget_ms = settings.budget_s * 1000.0;
  Measurement result;
  std::vector<double> times;
  double last_ms = 0.0;
  const auto probed_call = [&] {
    device.begin_memory_probe();
    last_ms = device.time_call_ms(call);
    if (const std::optional<int64_t> peak = device.end_memory_probe()) {
      result.peak_bytes = std::max(result.peak_bytes.value_or(0), *peak);
    }
  };

  double warm_ms = 0.0;
  for (int i = 0; i < settings.warmup && warm_ms < budget_ms; ++i) {
    if (last_ms >= kSlowCallMs) report_progress(label, "warm-up", i + 1, settings.warmup, last_ms);
    probed_call();
    warm_ms += last_ms;
    // A first call longer than the whole budget is not warming anything up worth another call
    // (thread start and first-touch costs are milliseconds): it counts as the first timed call.
    if (i == 0 && last_ms >= budget_ms) {
      times.push_back(last_ms);
      break;
    }
  }
  if (times.empty()) result.peak_bytes.reset();  // only timed calls count for memory

  double spent_ms = 0.0;
  for (const double t : times) spent_ms += t;
  const int min_reps = std::min(kMinReps, settings.repeat);
  while (static_cast<int>(times.size()) < settings.repeat &&
         (static_cast<int>(times.size()) < min_reps || spent_ms < budget_ms)) {
    if (last_ms >= kSlowCallMs) {
      report_progress(label, "rep", static_cast<int>(times.size()) + 1, settings.repeat, last_ms);
    }
    probed_call();
    times.push_back(last_ms);
    spent_ms += last_ms;
  }
  result.reps = static_cast<int>(times.size());
  result.median_ms = median(times);
  return result;
}

}  // namespace flashvision::tool
