// The flashvision command-line tool: `flashvision info` and `flashvision bench`.
#include <iostream>
#include <string>
#include <vector>

#include "cli_options.h"
#include "commands.h"
#include "flashvision/flashvision.h"

namespace {

constexpr int kUsageExit = 2;

constexpr const char* kUsage = R"(usage: flashvision <command> [options]

commands:
  info    version, backends compiled in and their kernels, devices found
  bench   time flashvision against a naive attention on the BENCH.md cases
          (flashvision bench --help for its options)
)";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all_args(argv, argv + argc);
  const std::vector<std::string> args(all_args.begin() + 1, all_args.end());
  try {
    if (args.empty()) {
      std::cerr << kUsage;
      return kUsageExit;
    }
    const std::string& command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "bench") return flashvision::tool::run_bench(rest, all_args);
    if (command == "info") {
      if (!rest.empty())
        throw flashvision::tool::UsageError("'flashvision info' takes no options, got '" + rest[0] +
                                            "'");
      return flashvision::tool::run_info();
    }
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    if (command == "--version") {
      std::cout << "flashvision " << flashvision::kVersion << " (built from "
                << flashvision::build_commit() << ")\n";
      return 0;
    }
    throw flashvision::tool::UsageError("unknown command '" + command +
                                        "'; expected 'info' or 'bench'");
  } catch (const flashvision::tool::UsageError& e) {
    std::cerr << "flashvision: " << e.what() << '\n';
    return kUsageExit;
  } catch (const std::exception& e) {
    // flashvision::Error messages already start with "flashvision: ".
    const std::string message = e.what();
    std::cerr << (message.starts_with("flashvision: ") ? "" : "flashvision: ") << message << '\n';
    return 1;
  }
}
