// Facts about a run that make a results file traceable: when, where, which commit, which command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench_device.h"

namespace flashvision::tool {

/// The "meta" object of a results file.
struct RunMeta {
  std::string date;  ///< UTC, ISO 8601
  std::string host;
  DeviceInfo device;                  ///< gpu, driver, cuda (null on the CPU)
  std::optional<std::string> commit;  ///< git sha of the source tree, when known
  std::optional<bool> commit_dirty;   ///< uncommitted changes to tracked files at run time
  std::string command;                ///< argv, shell-quoted where needed
  std::vector<std::string> devices;   ///< flashvision::describe_devices()
  uint64_t seed = 0;
};

/// Gathers the meta of a run on `device` started by `argv`.
RunMeta collect_run_meta(const BenchDevice& device, const std::vector<std::string>& argv,
                         uint64_t seed);

/// argv joined with spaces; arguments with shell metacharacters are single-quoted.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace flashvision::tool
