// Bit-exact conversions between float32 and the 16- and 8-bit storage formats (tests only).
//
// The tests write their own converters so that the expected values never depend on the library
// under test or on compiler support for _Float16 / __bf16.
#pragma once

#include <cstdint>

namespace flashvision::testing {

/// float32 -> bfloat16 bits, round to nearest even; NaN stays a (quiet) NaN.
uint16_t float_to_bf16_bits(float value);
/// bfloat16 bits -> float32 (exact).
float bf16_bits_to_float(uint16_t bits);
/// float32 -> IEEE binary16 bits, round to nearest even, with subnormals and overflow to inf.
uint16_t float_to_f16_bits(float value);
/// IEEE binary16 bits -> float32 (exact).
float f16_bits_to_float(uint16_t bits);
/// float32 -> float8 e4m3 (OCP "e4m3fn": no infinities) bits, round to nearest even, saturating
/// at +-448; NaN stays NaN (0x7f with the sign).
uint8_t float_to_e4m3_bits(float value);
/// float8 e4m3 bits -> float32 (exact).
float e4m3_bits_to_float(uint8_t bits);

}  // namespace flashvision::testing
