#include "proc_memory.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace flashvision::tool {

std::optional<int64_t> read_proc_status_bytes(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = std::string(field) + ":";
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with(prefix)) continue;
    try {
      return static_cast<int64_t>(std::stoll(line.substr(prefix.size()))) *
             1024;  // the kernel reports kB
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

void PeakRssProbe::begin() {
  baseline_bytes_.reset();
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  if (!clear_refs) return;
  baseline_bytes_ = read_proc_status_bytes("VmRSS");
}

std::optional<int64_t> PeakRssProbe::end() const {
  if (!baseline_bytes_) return std::nullopt;
  const std::optional<int64_t> peak = read_proc_status_bytes("VmHWM");
  if (!peak) return std::nullopt;
  return std::max<int64_t>(0, *peak - *baseline_bytes_);
}

}  // namespace flashvision::tool
