// The 8-lane (256-bit) conversion and transpose helpers shared by the AVX2 and AVX-512 kernels:
// F16C for f16, integer shifts for bf16 (a software round-to-nearest-even on the way back).
// Included by simd_avx2.h and simd_avx512.h after they define FLASHVISION_CPU_ISA_NS.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include cpu/simd_avx2.h or cpu/simd_avx512.h instead"
#endif

#include <immintrin.h>

#include <cstdint>

#include "cpu/convert.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

/// The 8-lane vector of the conversion and transpose kernels.
struct Vec8 {
  __m256 v;
};

template <DType kType>
inline float load1(const Storage<kType>* p) {
  if constexpr (kType == DType::f16) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(*p)));
  } else if constexpr (kType == DType::bf16) {
    return bf16_to_float(*p);
  } else {
    return *p;
  }
}

/// Stores x as `kType` (the scalar tail of store8, which has the same rounding).
template <DType kType, bool kNativeBf16 = false>
inline void store1(Storage<kType>* p, float x) {
  if constexpr (kType == DType::f16) {
    // The vector forms: clang's scalar _cvtss_sh is a macro with a C99 compound literal.
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *p = static_cast<uint16_t>(_mm_extract_epi16(h, 0));
  } else if constexpr (kType == DType::bf16) {
    *p = float_to_bf16(x);
  } else {
    *p = x;
  }
}

template <DType kType>
inline Vec8 load8(const Storage<kType>* p) {
  if constexpr (kType == DType::f16) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  } else if constexpr (kType == DType::bf16) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(wide, 16))};
  } else {
    return {_mm256_loadu_ps(p)};
  }
}

/// fp32 to bf16 with round to nearest even, as float_to_bf16 does one value at a time.
inline __m128i bf16_round_software(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), lowest_kept);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  const __m256i result = _mm256_blendv_epi8(_mm256_srli_epi32(rounded, 16), quiet_nan, is_nan);
  // Every lane is below 0x10000, so the saturating pack only narrows.
  return _mm_packus_epi32(_mm256_castsi256_si128(result), _mm256_extracti128_si256(result, 1));
}

#ifdef FLASHVISION_CPU_NATIVE_BF16
/// VCVTNEPS2BF16 (round to nearest even; it treats subnormals as zero). Only this function is
/// compiled for AVX512_BF16, so no other code of the TU can pick up the instruction.
__attribute__((target("avx512bf16,avx512vl"))) inline __m128i bf16_round_native(__m256 x) {
  const __m128bh packed = _mm256_cvtneps_pbh(x);
  __m128i bits;
  __builtin_memcpy(&bits, &packed, sizeof(bits));
  return bits;
}
#endif

template <DType kType, bool kNativeBf16 = false>
inline void store8(Storage<kType>* p, Vec8 a) {
  if constexpr (kType == DType::f16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  } else if constexpr (kType == DType::bf16) {
#ifdef FLASHVISION_CPU_NATIVE_BF16
    if constexpr (kNativeBf16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bf16_round_native(a.v));
      return;
    }
#endif
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bf16_round_software(a.v));
  } else {
    _mm256_storeu_ps(p, a.v);
  }
}

inline Vec8 broadcast8(float x) { return {_mm256_set1_ps(x)}; }
inline Vec8 mul8(Vec8 a, Vec8 b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline Vec8 fma8(Vec8 a, Vec8 b, Vec8 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline float sum8(Vec8 a) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

/// Transposes the 8x8 block held in rows[0..7].
inline void transpose8(Vec8 (&rows)[8]) {
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(rows[2 * i].v, rows[2 * i + 1].v);
    t[2 * i + 1] = _mm256_unpackhi_ps(rows[2 * i].v, rows[2 * i + 1].v);
  }
  __m256 u[8];
  for (int i = 0; i < 2; ++i) {
    const int o = 4 * i;
    u[o + 0] = _mm256_shuffle_ps(t[o + 0], t[o + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[o + 1] = _mm256_shuffle_ps(t[o + 0], t[o + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[o + 2] = _mm256_shuffle_ps(t[o + 1], t[o + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[o + 3] = _mm256_shuffle_ps(t[o + 1], t[o + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    rows[i].v = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    rows[i + 4].v = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
