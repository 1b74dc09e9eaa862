// Adaptive repeated timing of one call: median wall time, repetitions and peak extra memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "bench_device.h"

namespace flashvision::tool {

/// How long one measurement may run.
struct MeasureSettings {
  int warmup = 1;   ///< most warm-up calls (fewer when one call already spends the budget)
  int repeat = 20;  ///< most timed calls
  double budget_s =
      2.5;  ///< stop repeating once this much time is spent (after min(3, repeat) calls)
};

/// Result of one measurement.
struct Measurement {
  double median_ms = 0.0;
  int reps = 0;
  std::optional<int64_t> peak_bytes;  ///< largest extra memory over the timed calls
};

/// Times `call` on `device`. `label` names it in the progress lines printed to stderr when calls
/// are slow (one line per call once a call took a second or more). A first warm-up call that
/// alone outlasts the budget is kept as the first timed call, so huge cases cost one call less.
Measurement measure(BenchDevice& device, const std::function<void()>& call,
                    const MeasureSettings& settings, const std::string& label);

}  // namespace flashvision::tool
