// Peak resident memory of this process from Linux /proc (the CPU memory measurement).
#pragma once

#include <cstdint>
#include <optional>

namespace flashvision::tool {

/// Measures how far the resident set rose above its level at begin(): writes "5" to
/// /proc/self/clear_refs (which resets VmHWM to the current RSS), then reads VmHWM at end().
class PeakRssProbe {
 public:
  /// Resets the peak; later end() calls answer nullopt when /proc does not allow it.
  void begin();
  /// Peak RSS since begin() minus the RSS at begin(), in bytes (never negative).
  std::optional<int64_t> end() const;

 private:
  std::optional<int64_t> baseline_bytes_;
};

/// A "VmXXX:" field of /proc/self/status in bytes, or nullopt.
std::optional<int64_t> read_proc_status_bytes(const char* field);

}  // namespace flashvision::tool
