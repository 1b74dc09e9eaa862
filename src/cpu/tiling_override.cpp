#include "cpu/tiling_override.h"

#include <optional>
#include <string>
#include <string_view>

#include "api/env_option.h"

namespace flashvision::detail::cpu {
namespace {

constexpr const char* kVariable = "FLASHVISION_CPU_FWD_BLOCKS";
constexpr const char* kSplitVariable = "FLASHVISION_CPU_FWD_KEY_SPLIT";
constexpr const char* kAmxVariable = "FLASHVISION_CPU_AMX_BLOCKS";

[[noreturn]] void reject(const std::string& value) {
  reject_env(kVariable, value,
             "\"Q,K\": query rows a multiple of 16 and keys a multiple of 8, both from 1 to 1024 "
             "(e.g. \"384,128\")");
}

[[noreturn]] void reject_amx(const std::string& value) {
  reject_env(kAmxVariable, value,
             "\"Q,K\": query rows a multiple of 16 and keys a multiple of 32, both up to 1024 "
             "(e.g. \"32,256\")");
}

/// The whole of `text` as a block size that is a multiple of `step` in [step, 1024], else 0.
int64_t parse_block(std::string_view text, int64_t step) {
  const std::optional<long long> value = decimal_in(text, step, 1024);
  return value && *value % step == 0 ? *value : 0;
}

}  // namespace

Tiling forward_tiling_override(const Tiling& chosen) {
  const std::optional<std::string> value = env_text(kVariable);
  if (!value) return chosen;
  const std::size_t comma = value->find(',');
  if (comma == std::string::npos) reject(*value);
  const int64_t block_q = parse_block(std::string_view(*value).substr(0, comma), kLanePad);
  const int64_t block_k = parse_block(std::string_view(*value).substr(comma + 1), 8);
  if (block_q == 0 || block_k == 0) reject(*value);
  return {block_q, block_k};
}

AmxBlocks amx_blocks_override() {
  const std::optional<std::string> value = env_text(kAmxVariable);
  if (!value) return {};
  const std::size_t comma = value->find(',');
  if (comma == std::string::npos) reject_amx(*value);
  const int64_t rows = parse_block(std::string_view(*value).substr(0, comma), 16);
  const int64_t keys = parse_block(std::string_view(*value).substr(comma + 1), 32);
  if (rows == 0 || keys == 0) reject_amx(*value);
  return {rows, keys};
}

int forward_key_split_override() {
  return env_choice(kSplitVariable, {{"auto", -1}, {"0", 0}, {"1", 1}}, -1,
                    "\"auto\", \"0\" (never split the keys) or \"1\" (always split them in two)");
}

}  // namespace flashvision::detail::cpu
