#include "api/env_option.h"

#include <cstdlib>

#include "flashvision/error.h"

namespace flashvision::detail {

std::optional<std::string> env_text(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return std::nullopt;
  return std::string(raw);
}

std::optional<long long> decimal_in(std::string_view text, long long low, long long high) {
  // 18 digits cannot overflow a long long; longer text is out of every range used here anyway.
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != text.npos) {
    return std::nullopt;
  }
  long long value = 0;
  for (const char digit : text) value = value * 10 + (digit - '0');
  if (value < low || value > high) return std::nullopt;
  return value;
}

void reject_env(const char* name, const std::string& text, std::string_view expected) {
  throw Error(std::string(name) + " is \"" + text + "\", expected " + std::string(expected));
}

long long env_decimal(const char* name, long long low, long long high, long long fallback,
                      std::string_view expected, bool accepts_auto) {
  const std::optional<std::string> text = env_text(name);
  if (!text || (accepts_auto && *text == "auto")) return fallback;
  const std::optional<long long> value = decimal_in(*text, low, high);
  if (!value) reject_env(name, *text, expected);
  return *value;
}

int env_choice(const char* name, std::initializer_list<EnvChoice> choices, int fallback,
               std::string_view expected) {
  const std::optional<std::string> text = env_text(name);
  if (!text) return fallback;
  for (const EnvChoice& choice : choices) {
    if (*text == choice.text) return choice.value;
  }
  reject_env(name, *text, expected);
}

}  // namespace flashvision::detail
