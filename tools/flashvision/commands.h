// The subcommands of the flashvision tool.
#pragma once

#include <string>
#include <vector>

namespace flashvision::tool {

/// `flashvision info`: version, compiled backends with their kernels, devices found.
int run_info();

/// `flashvision bench ...`: `args` follow "bench"; `argv` is the whole command line (recorded).
int run_bench(const std::vector<std::string>& args, const std::vector<std::string>& argv);

}  // namespace flashvision::tool
