// Run metadata. The commit comes from `git rev-parse HEAD` in the source tree at run time (popen),
// falling back to the commit the library was built from (flashvision::build_commit()).
#include "run_meta.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <unistd.h>

#include "flashvision/flashvision.h"

#ifndef FLASHVISION_SOURCE_DIR
#define FLASHVISION_SOURCE_DIR "."
#endif

namespace flashvision::tool {

namespace {

/// stdout of a shell command, or nullopt when it fails.
std::optional<std::string> command_output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string output;
  std::array<char, 256> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr)
    output += chunk.data();
  if (pclose(pipe) != 0) return std::nullopt;
  return output;
}

bool is_sha(const std::string& text) {
  if (text.size() != 40) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string git_command(const char* args) {
  return std::string("git -C ") + shell_join({FLASHVISION_SOURCE_DIR}) + " " + args +
         " 2>/dev/null";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

}  // namespace

std::string shell_join(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& arg : argv) {
    if (!joined.empty()) joined += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_not_of(
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                            "-_./=,:+@%") == std::string::npos;
    if (plain) {
      joined += arg;
      continue;
    }
    joined += '\'';
    for (const char c : arg) joined += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    joined += '\'';
  }
  return joined;
}

RunMeta collect_run_meta(const BenchDevice& device, const std::vector<std::string>& argv,
                         uint64_t seed) {
  RunMeta meta;
  meta.date = utc_now();
  meta.host = host_name();
  meta.device = device.info();
  meta.command = shell_join(argv);
  meta.devices = describe_devices();
  meta.seed = seed;
  if (std::optional<std::string> head = command_output(git_command("rev-parse HEAD"))) {
    while (!head->empty() && (head->back() == '\n' || head->back() == '\r')) head->pop_back();
    if (is_sha(*head)) {
      meta.commit = *head;
      if (const std::optional<std::string> status =
              command_output(git_command("status --porcelain --untracked-files=no"))) {
        meta.commit_dirty = !status->empty();
      }
    }
  }
  if (!meta.commit) {
    const std::string built = std::string(build_commit()).substr(0, 40);
    if (is_sha(built)) meta.commit = built;
  }
  return meta;
}

}  // namespace flashvision::tool
