// AVX2 + FMA vectors (8 floats) for the compute kernels. Compiled only into kernels_avx2.cpp,
// which is built with -mavx2 -mfma -mf16c and reached only after CPUID confirms those.
#pragma once

#define FLASHVISION_CPU_ISA_NS isa_avx2

#include <immintrin.h>

#include "cpu/simd_x86_vec8.h"

namespace flashvision::detail::cpu::isa_avx2 {

/// Rows x vectors of the register-blocked GEMM tile: 12 accumulators, 3 B vectors and one
/// broadcast fill the 16 ymm registers.
inline constexpr int kGemmRows = 4;
inline constexpr int kGemmVecs = 3;

/// The wide vector of the compute kernels.
struct Vec {
  static constexpr int kWidth = 8;
  __m256 v;
};

inline Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
inline void store(float* p, Vec a) { _mm256_storeu_ps(p, a.v); }
inline Vec broadcast(float x) { return {_mm256_set1_ps(x)}; }
inline Vec zero() { return {_mm256_setzero_ps()}; }

inline Vec operator+(Vec a, Vec b) { return {_mm256_add_ps(a.v, b.v)}; }
inline Vec operator-(Vec a, Vec b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline Vec operator*(Vec a, Vec b) { return {_mm256_mul_ps(a.v, b.v)}; }
/// a * b + c.
inline Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
/// maxps: b where either is NaN, so a NaN in b propagates.
inline Vec max(Vec a, Vec b) { return {_mm256_max_ps(a.v, b.v)}; }
/// minps: b where either is NaN.
inline Vec min(Vec a, Vec b) { return {_mm256_min_ps(a.v, b.v)}; }
/// a < b ? x : y per lane.
inline Vec select_lt(Vec a, Vec b, Vec x, Vec y) {
  return {_mm256_blendv_ps(y.v, x.v, _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ))};
}
/// True when a < b in any lane.
inline bool any_lt(Vec a, Vec b) {
  return _mm256_movemask_ps(_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)) != 0;
}
/// Round to the nearest integer, ties to even.
inline Vec round_nearest(Vec a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
/// x limited to [-127, 127], the exponents times_pow2 can build; a NaN x stays NaN (maxps/minps
/// return the second operand).
inline Vec clamp_exponent(Vec x) { return min(broadcast(127.0f), max(broadcast(-127.0f), x)); }
/// p * 2^n for integral n in [-127, 127], built in the exponent bits; n = -127 gives 0.
inline Vec times_pow2(Vec p, Vec n) {
  const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n.v), _mm256_set1_epi32(127));
  return {_mm256_mul_ps(p.v, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)))};
}

}  // namespace flashvision::detail::cpu::isa_avx2
