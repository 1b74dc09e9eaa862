#include <iostream>
#include <string>

#include "bench_device.h"
#include "commands.h"
#include "flashvision/flashvision.h"

namespace flashvision::tool {

namespace {

/// Whether `flashvision bench --device cuda` can run here, and if not why.
std::string cuda_bench_status() {
  try {
    make_cuda_device(0);
    return "yes";
  } catch (const std::exception& e) {
    std::string why = e.what();
    for (const std::string prefix : {"flashvision: ", "--device cuda: "}) {
      if (why.starts_with(prefix)) why.erase(0, prefix.size());
    }
    return "no: " + why;
  }
}

}  // namespace

int run_info() {
  std::cout << "flashvision " << kVersion << " (built from " << build_commit()
            << ")\n\nbackends compiled in:\n";
  for (const Backend backend : compiled_backends()) {
    std::string kernel;
    try {
      kernel = kernel_name(backend);
    } catch (const std::exception& e) {
      kernel = std::string("(unavailable: ") + e.what() + ")";
    }
    std::cout << "  " << to_string(backend) << ": " << kernel << '\n';
  }
  std::cout << "\ndevices:\n";
  for (const std::string& line : describe_devices()) std::cout << "  " << line << '\n';
  std::cout << "\nbench on cpu: yes\nbench on cuda: " << cuda_bench_status() << '\n';
  return 0;
}

}  // namespace flashvision::tool
