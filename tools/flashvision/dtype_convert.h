// Scalar conversions between float and the 16-bit storage types, done on the host.
#pragma once

#include <bit>
#include <cstdint>

namespace flashvision::tool {

/// bfloat16 bits to float (exact).
inline float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// float to bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

/// IEEE half bits to float (exact, subnormals included).
inline float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // Subnormal half: value = mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// float to IEEE half bits, rounding to nearest even; overflow gives infinity.
inline uint16_t float_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (magnitude < 0x38800000u) {
    // Result is subnormal or zero: scale so the half ulp 2^-24 becomes 1 and let the FPU round.
    const float scaled = std::bit_cast<float>(magnitude) * 0x1p24f;
    const auto rounded = static_cast<uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(rounded);
    const uint32_t up = (rest > 0.5f || (rest == 0.5f && (rounded & 1u))) ? 1u : 0u;
    return static_cast<uint16_t>(sign | (rounded + up));
  }
  const uint32_t rebased = magnitude - (112u << 23);
  const uint32_t rounding = 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rebased + rounding) >> 13));
}

}  // namespace flashvision::tool
