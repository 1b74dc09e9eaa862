// The one exception type flashvision throws.
#pragma once

#include <stdexcept>
#include <string>

namespace flashvision {

/// Thrown for invalid arguments and backend failures. what() starts with "flashvision: " and names
/// the argument, the value it had and what was expected.
class Error : public std::invalid_argument {
 public:
  /// Builds the error; `message` is prefixed with "flashvision: ".
  explicit Error(const std::string& message) : std::invalid_argument("flashvision: " + message) {}
};

}  // namespace flashvision
