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

/// The whole of `text` as a block size that is a multiple of `step` in [step, 1024], else 0.
int64_t parse_block(std::string_view text, int64_t step) {
  const std::optional<long long> value = decimal_in(text, step, 1024);
  return value && *value % step == 0 ? *value : 0;
}

/// The blocks variable `name` sets as "Q,K" (Q a multiple of row_step, K of key_step, both up to
/// 1024), nothing where it is unset or empty; any other value is rejected with `expected`.
std::optional<AmxBlocks> blocks_from_env(const char* name, int64_t row_step, int64_t key_step,
                                         std::string_view expected) {
  const std::optional<std::string> value = env_text(name);
  if (!value) return std::nullopt;
  const std::size_t comma = value->find(',');
  if (comma == std::string::npos) reject_env(name, *value, expected);
  const AmxBlocks blocks{parse_block(std::string_view(*value).substr(0, comma), row_step),
                         parse_block(std::string_view(*value).substr(comma + 1), key_step)};
  if (blocks.rows == 0 || blocks.keys == 0) reject_env(name, *value, expected);
  return blocks;
}

}  // namespace

Tiling forward_tiling_override(const Tiling& chosen) {
  const std::optional<AmxBlocks> blocks = blocks_from_env(
      kVariable, kLanePad, 8,
      "\"Q,K\": query rows a multiple of 16 and keys a multiple of 8, both from 1 to 1024 "
      "(e.g. \"384,128\")");
  return blocks ? Tiling{blocks->rows, blocks->keys} : chosen;
}

AmxBlocks amx_blocks_override() {
  return blocks_from_env(kAmxVariable, 16, 32,
                         "\"Q,K\": query rows a multiple of 16 and keys a multiple of 32, both "
                         "up to 1024 (e.g. \"32,256\")")
      .value_or(AmxBlocks{});
}

int forward_key_split_override() {
  return env_choice(kSplitVariable, {{"auto", -1}, {"0", 0}, {"1", 1}}, -1,
                    "\"auto\", \"0\" (never split the keys) or \"1\" (always split them in two)");
}

}  // namespace flashvision::detail::cpu
