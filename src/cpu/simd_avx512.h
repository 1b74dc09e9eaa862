// AVX-512 vectors (16 floats) for the compute kernels. Compiled only into kernels_avx512.cpp,
// which is built with -mavx512f -mavx512bw -mavx512vl -mavx512dq (plus AVX2/FMA/F16C, which every
// AVX-512 CPU has) and reached only after CPUID confirms them.
#pragma once

#define FLASHVISION_CPU_ISA_NS isa_avx512

#include <immintrin.h>

#include "cpu/simd_x86_vec8.h"

namespace flashvision::detail::cpu::isa_avx512 {

/// Rows x vectors of the register-blocked GEMM tile: 24 accumulators, 3 B vectors and one
/// broadcast out of 32 zmm registers.
inline constexpr int kGemmRows = 8;
inline constexpr int kGemmVecs = 3;

/// The wide vector of the compute kernels.
struct Vec {
  static constexpr int kWidth = 16;
  __m512 v;
};

inline Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline void store(float* p, Vec a) { _mm512_storeu_ps(p, a.v); }
inline Vec broadcast(float x) { return {_mm512_set1_ps(x)}; }
inline Vec zero() { return {_mm512_setzero_ps()}; }

inline Vec operator+(Vec a, Vec b) { return {_mm512_add_ps(a.v, b.v)}; }
inline Vec operator-(Vec a, Vec b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline Vec operator*(Vec a, Vec b) { return {_mm512_mul_ps(a.v, b.v)}; }
/// a * b + c.
inline Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
/// maxps: b where either is NaN, so a NaN in b propagates.
inline Vec max(Vec a, Vec b) { return {_mm512_max_ps(a.v, b.v)}; }
/// a < b ? x : y per lane.
inline Vec select_lt(Vec a, Vec b, Vec x, Vec y) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), y.v, x.v)};
}
/// True when a < b in any lane.
inline bool any_lt(Vec a, Vec b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ) != 0; }
/// Round to the nearest integer, ties to even.
inline Vec round_nearest(Vec a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
/// x itself: vscalefps (times_pow2) takes any exponent, so unlike the AVX2 path nothing needs
/// clamping, which saves two instructions per exp2 (the softmax's inner loop).
inline Vec clamp_exponent(Vec x) { return x; }
/// p * 2^n for integral n in one vscalefps; n <= -127 (-inf included) gives exactly 0, as the
/// AVX2 path does, so no subnormal scale reaches the GEMMs. A NaN n stays NaN (unordered compare).
inline Vec times_pow2(Vec p, Vec n) {
  const __mmask16 kept = _mm512_cmp_ps_mask(n.v, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ);
  return {_mm512_maskz_scalef_ps(kept, p.v, n.v)};
}

}  // namespace flashvision::detail::cpu::isa_avx512
