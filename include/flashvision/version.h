// Library version.
#pragma once

#define FLASHVISION_VERSION_MAJOR 0
#define FLASHVISION_VERSION_MINOR 1
#define FLASHVISION_VERSION_PATCH 0

namespace flashvision {
/// Version string "MAJOR.MINOR.PATCH".
inline constexpr const char* kVersion = "0.1.0";
}  // namespace flashvision
