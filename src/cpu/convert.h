// Scalar conversions between fp32 and the 16-bit storage dtypes (IEEE f16, bf16), round to
// nearest even, with subnormals, infinities and NaNs handled exactly.
//
// Like every header a micro-kernel translation unit includes, this one puts its inline functions
// in the namespace FLASHVISION_CPU_ISA_NS that the including TU defines (isa_portable, isa_avx2,
// isa_avx512). An inline function compiled in several TUs with different -m flags is one symbol
// to the linker, which may keep the AVX-512 copy for every caller; distinct namespaces make the
// copies distinct symbols.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "define FLASHVISION_CPU_ISA_NS before including cpu/convert.h"
#endif

#include <cstdint>
#include <type_traits>

#include "flashvision/tensor.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

/// The C++ type an element of `kType` is stored as (16-bit types as their raw bits).
template <DType kType>
using Storage = std::conditional_t<kType == DType::f32, float, uint16_t>;

inline uint32_t float_bits(float x) { return __builtin_bit_cast(uint32_t, x); }
inline float bits_float(uint32_t b) { return __builtin_bit_cast(float, b); }

/// bf16 bits to fp32 (exact).
inline float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

/// fp32 to bf16 bits, round to nearest even; NaNs stay (quiet) NaNs.
inline uint16_t float_to_bf16(float x) {
  const uint32_t b = float_bits(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((b >> 16) | 0x40u);
  // Adding 0x7fff plus the lowest kept bit rounds ties to the even neighbour; a carry into the
  // exponent is the correct rounding up to the next binade (or to infinity).
  const uint32_t rounded = b + 0x7fffu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

/// IEEE f16 bits to fp32 (exact, including subnormals and infinities; NaN payloads are kept).
inline float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) {
    // NaNs come back quiet, as F16C returns them.
    const uint32_t quiet = mantissa != 0 ? 0x200u : 0u;
    return bits_float(sign | 0x7f800000u | ((mantissa | quiet) << 13));
  }
  if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in fp32.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return bits_float(sign | float_bits(magnitude));
}

/// fp32 to IEEE f16 bits, round to nearest even (overflow to infinity, gradual underflow).
inline uint16_t float_to_f16(float x) {
  const uint32_t b = float_bits(x);
  const uint32_t sign = (b >> 16) & 0x8000u;
  const uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  // 65520 is halfway between 65504 (the largest f16) and 65536; ties go to the even 65536 = inf.
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a >= 0x38800000u) {  // normal in f16 (>= 2^-14)
    const uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
  }
  // Subnormal in f16: round (value / 2^-24) to an integer. Values up to 2^-25 round to zero.
  if (a <= 0x33000000u) return static_cast<uint16_t>(sign);
  const uint32_t exponent = a >> 23;
  const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exponent;  // 14..24
  uint32_t result = mantissa >> shift;
  const uint32_t remainder = mantissa & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (remainder > half || (remainder == half && (result & 1u))) ++result;
  return static_cast<uint16_t>(sign | result);
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
