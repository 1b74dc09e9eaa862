#include "cpu/tiling_override.h"

#include <cstdlib>
#include <string>

#include "flashvision/error.h"

namespace flashvision::detail::cpu {
namespace {

constexpr const char* kVariable = "FLASHVISION_CPU_FWD_BLOCKS";
constexpr const char* kSplitVariable = "FLASHVISION_CPU_FWD_KEY_SPLIT";

[[noreturn]] void reject(const std::string& value) {
  throw Error(std::string(kVariable) + " is \"" + value +
              "\", expected \"Q,K\": query rows a multiple of 16 and keys a multiple of 8, both "
              "from 1 to 1024 (e.g. \"384,128\")");
}

/// The whole of `text` as a block size that is a multiple of `step` in [step, 1024], else 0.
int64_t parse_block(const std::string& text, int64_t step) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  const int64_t value = std::stoll(text);
  return value >= step && value <= 1024 && value % step == 0 ? value : 0;
}

}  // namespace

Tiling forward_tiling_override(const Tiling& chosen) {
  const char* raw = std::getenv(kVariable);
  if (raw == nullptr || *raw == '\0') return chosen;
  const std::string value(raw);
  const std::size_t comma = value.find(',');
  if (comma == std::string::npos) reject(value);
  const int64_t block_q = parse_block(value.substr(0, comma), kLanePad);
  const int64_t block_k = parse_block(value.substr(comma + 1), 8);
  if (block_q == 0 || block_k == 0) reject(value);
  return {block_q, block_k};
}

int forward_key_split_override() {
  const char* raw = std::getenv(kSplitVariable);
  if (raw == nullptr || *raw == '\0') return -1;
  const std::string value(raw);
  if (value == "auto") return -1;
  if (value == "0") return 0;
  if (value == "1") return 1;
  throw Error(std::string(kSplitVariable) + " is \"" + value +
              "\", expected \"auto\", \"0\" (never split the keys) or \"1\" (always split them "
              "in two)");
}

}  // namespace flashvision::detail::cpu
