// Sets an environment variable for one scope: the tests of the library's environment overrides
// (FLASHVISION_CPU_ISA, FLASHVISION_SM80_BWD_TILE) use it.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace flashvision::testing {

/// Sets an environment variable for one scope and restores the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (previous_) {
      setenv(name_, previous_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

}  // namespace flashvision::testing
