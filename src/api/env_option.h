// Reading the library's environment variables (docs/environment.md): one place for "unset or empty
// means the default", the decimal forms they accept and the error that names a bad value.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace flashvision::detail {

/// The value of environment variable `name`, or nothing where it is unset or empty.
std::optional<std::string> env_text(const char* name);

/// `text` as a decimal integer in [low, high] (digits only, no sign or spaces), else nothing.
std::optional<long long> decimal_in(std::string_view text, long long low, long long high);

/// Throws Error: `<name> is "<text>", expected <expected>`.
[[noreturn]] void reject_env(const char* name, const std::string& text, std::string_view expected);

/// What variable `name` sets as a decimal integer in [low, high] (decimal_in): `fallback` where it
/// is unset or empty, or where it is "auto" and `accepts_auto`; any other value is rejected with
/// `expected` (reject_env).
long long env_decimal(const char* name, long long low, long long high, long long fallback,
                      std::string_view expected, bool accepts_auto = false);

/// One accepted value of a variable and what it selects.
struct EnvChoice {
  std::string_view text;
  int value;
};

/// What variable `name` selects among `choices`: `fallback` where it is unset or empty; any other
/// value is rejected with `expected` (reject_env).
int env_choice(const char* name, std::initializer_list<EnvChoice> choices, int fallback,
               std::string_view expected);

}  // namespace flashvision::detail
