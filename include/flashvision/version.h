// Library version.
#pragma once

#define FLASHVISION_VERSION_MAJOR 0
#define FLASHVISION_VERSION_MINOR 1
#define FLASHVISION_VERSION_PATCH 0

namespace flashvision {
/// Version string "MAJOR.MINOR.PATCH".
inline constexpr const char* kVersion = "0.1.0";

/// The git commit this library was built from: 40 hex digits, followed by "-dirty" where tracked
/// files differed from that commit at build time; "unknown" when built outside a git checkout.
/// Benchmark records carry it, so that a figure names the code that produced it.
const char* build_commit();
}  // namespace flashvision
