// Round-to-nearest-even conversions for bf16 and f16, written from the IEEE 754 definitions, and
// for e4m3 from the OCP 8-bit floating point specification.
#include "float_formats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>

namespace flashvision::testing {

uint16_t float_to_bf16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds half-way cases to the even neighbour; a carry
  // into the exponent is the correct rounding (up to the next binade or to infinity).
  const uint32_t lowest_kept = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + lowest_kept) >> 16);
}

float bf16_bits_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t float_to_f16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(value)) return static_cast<uint16_t>(sign | 0x7e00u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  const int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent >= 16) return static_cast<uint16_t>(sign | 0x7c00u);  // inf or too large
  // Significand with its implicit bit; float32 subnormals lie far below f16's range and give 0.
  const uint32_t significand = (magnitude & 0x7fffffu) | (exponent > -127 ? 0x800000u : 0u);
  // Number of low bits to drop: 13 for normal f16 results, more for f16 subnormals.
  const int shift = exponent >= -14 ? 13 : 13 + (-14 - exponent);
  if (shift > 24) return sign;  // below half the smallest subnormal
  const uint32_t kept = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  if (exponent >= -14) {
    // Normal: rebuild exponent and mantissa; a mantissa carry bumps the exponent (maybe to inf).
    rounded = (static_cast<uint32_t>(exponent + 15) << 10) + (rounded - 0x400u);
  }
  return static_cast<uint16_t>(sign | rounded);
}

float f16_bits_to_float(uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa ? std::nanf("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

float e4m3_bits_to_float(uint8_t bits) {
  const float sign = (bits & 0x80u) != 0 ? -1.0f : 1.0f;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

uint8_t float_to_e4m3_bits(float value) {
  // The 127 finite magnitudes by code (0x7f is NaN); codes are ordered like their values.
  static const std::array<float, 127> magnitudes = [] {
    std::array<float, 127> m{};
    for (std::size_t code = 0; code < m.size(); ++code) {
      m[code] = e4m3_bits_to_float(static_cast<uint8_t>(code));
    }
    return m;
  }();
  const uint8_t sign = std::signbit(value) ? 0x80u : 0x00u;
  if (std::isnan(value)) return static_cast<uint8_t>(sign | 0x7fu);
  const float magnitude = std::fabs(value);
  // The nearest magnitude, the even code (an even last mantissa bit) on a tie; past the largest,
  // the largest (saturation).
  const auto above = std::upper_bound(magnitudes.begin(), magnitudes.end(), magnitude);
  if (above == magnitudes.end()) return static_cast<uint8_t>(sign | 0x7eu);
  const auto upper = static_cast<uint8_t>(above - magnitudes.begin());
  if (upper == 0) return sign;
  const auto lower = static_cast<uint8_t>(upper - 1);
  const float below_err = magnitude - magnitudes[lower];
  const float above_err = magnitudes[upper] - magnitude;
  const bool round_up = above_err < below_err || (above_err == below_err && upper % 2 == 0);
  return static_cast<uint8_t>(sign | (round_up ? upper : lower));
}

}  // namespace flashvision::testing
