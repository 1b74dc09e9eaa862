// The row-wise steps of the AMX forward (packing, softmax, output) in AVX-512 F/BW/VL/DQ and
// AVX512_BF16. Only kernels_amx.cpp includes this; amx_rows_portable.h has the same functions in
// plain C++ for the emulated tiles.
#pragma once

#define FLASHVISION_CPU_ISA_NS isa_amx

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "cpu/amx_kernels.h"

namespace flashvision::detail::cpu::isa_amx {

/// The first `n` (at most 16) lanes.
inline __mmask16 first16(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n < 0 ? 0 : n)) - 1u);
}
/// The first `n` (at most 32) 16-bit lanes.
inline __mmask32 first32(int64_t n) {
  return n >= 32 ? __mmask32(0xffffffffu) : static_cast<__mmask32>((1ull << (n < 0 ? 0 : n)) - 1u);
}

/// 2^x with a relative error of 3e-6; x < -126 (and -inf) gives 0. 11 vector uops with the
/// caller's FMA, sum and conversion (objdump: vreduceps, 4 FMAs, vcmpps, vscalefps): f = x -
/// floor(x) takes one VREDUCEPS where VRNDSCALEPS (two uops) and a subtraction took three, and
/// VSCALEFPS scales by 2^floor(x) from x itself.
inline __m512 exp2_ps(__m512 x) {
  // imm[7:4] = 0: no fraction bits kept, so f = x - floor(x) in [0, 1).
  const __m512 f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kExp2Poly[4]), f, _mm512_set1_ps(kExp2Poly[3]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[2]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[1]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  const __mmask16 kept = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ);
  return _mm512_maskz_scalef_ps(kept, p, x);
}

/// 16 fp32 to bf16 (round to nearest even), stored to the first `n` of dst[0..16).
inline void store_bf16(uint16_t* dst, __m512 x, __mmask16 n_mask) {
  const __m256bh h = _mm512_cvtneps_pbh(x);
  __m256i bits;
  std::memcpy(&bits, &h, sizeof(bits));
  _mm256_mask_storeu_epi16(dst, n_mask, bits);
}

/// The max over j < n (n > 0) of s[j] * scale when it is above `bound`; otherwise some value not
/// above it. The usual block leaves the running max where it was (it moves only past a slack),
/// and the test needs one compare of the lanes' extremes, not a horizontal reduction (~9 uops a
/// row). The lanes keep the min of s when scale is negative, whose product is then the max.
template <bool kNegativeScale>
inline float scaled_max_past(const float* s, int64_t n, float scale, float bound) {
  const auto extreme = [](__m512 a, __m512 b) {
    return kNegativeScale ? _mm512_min_ps(a, b) : _mm512_max_ps(a, b);
  };
  __m512 m = _mm512_set1_ps(kNegativeScale ? __builtin_inff() : -__builtin_inff());
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) m = extreme(m, _mm512_loadu_ps(s + j));
  if (j < n) {
    const __mmask16 in = first16(n - j);
    m = _mm512_mask_mov_ps(m, in, extreme(m, _mm512_maskz_loadu_ps(in, s + j)));
  }
  const __m512 scaled = _mm512_mul_ps(m, _mm512_set1_ps(scale));
  if (_mm512_cmp_ps_mask(scaled, _mm512_set1_ps(bound), _CMP_GT_OQ) == 0) return bound;
  return _mm512_reduce_max_ps(scaled);
}
inline float scaled_max_past(const float* s, int64_t n, float scale, float bound) {
  return scale < 0.0f ? scaled_max_past<true>(s, n, scale, bound)
                      : scaled_max_past<false>(s, n, scale, bound);
}

/// 32 fp32 to bf16 (round to nearest even) at dst: one VCVTNE2PS2BF16 (two uops) where two
/// VCVTNEPS2BF16 would take four.
inline void store_bf16_pair(uint16_t* dst, __m512 lo, __m512 hi) {
  const __m512bh h = _mm512_cvtne2ps_pbh(hi, lo);  // the second source fills the low half
  __m512i bits;
  std::memcpy(&bits, &h, sizeof(bits));
  _mm512_storeu_si512(dst, bits);
}

/// p[j] = bf16(2^(s[j] * scale - shift)) for j < n, 0 for n <= j < padded (a multiple of 32);
/// sums[0..kAmxSumLanes) = sums * alpha + partial sums of the fp32 values.
inline void exp2_row_to_bf16(const float* s, int64_t n, int64_t padded, float scale, float shift,
                             uint16_t* p, float* sums, float alpha) {
  const __m512 c = _mm512_set1_ps(scale), m = _mm512_set1_ps(shift);
  const auto whole = [&](int64_t j) {
    return exp2_ps(_mm512_fmsub_ps(_mm512_loadu_ps(s + j), c, m));
  };
  const auto part = [&](int64_t j) {  // the partial vector, or zeros
    const __mmask16 in = first16(n - j);
    return _mm512_maskz_mov_ps(in,
                               exp2_ps(_mm512_fmsub_ps(_mm512_maskz_loadu_ps(in, s + j), c, m)));
  };
  __m512 sum_lo = _mm512_setzero_ps(), sum_hi = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m512 lo = whole(j), hi = whole(j + 16);
    sum_lo = _mm512_add_ps(sum_lo, lo);
    sum_hi = _mm512_add_ps(sum_hi, hi);
    store_bf16_pair(p + j, lo, hi);
  }
  for (; j < padded; j += 32) {
    const __m512 lo = part(j), hi = part(j + 16);
    sum_lo = _mm512_add_ps(sum_lo, lo);
    sum_hi = _mm512_add_ps(sum_hi, hi);
    store_bf16_pair(p + j, lo, hi);
  }
  _mm512_storeu_ps(sums, _mm512_fmadd_ps(_mm512_loadu_ps(sums), _mm512_set1_ps(alpha),
                                         _mm512_add_ps(sum_lo, sum_hi)));
}

/// The total of a row's kAmxSumLanes partial sums.
inline float row_total(const float* sums) {
  static_assert(kAmxSumLanes == 16, "one vector of partial sums");
  return _mm512_reduce_add_ps(_mm512_loadu_ps(sums));
}

/// o[0..n) *= alpha, n a multiple of 16.
inline void scale_row(float* o, int64_t n, float alpha) {
  const __m512 a = _mm512_set1_ps(alpha);
  for (int64_t j = 0; j < n; j += 16)
    _mm512_storeu_ps(o + j, _mm512_mul_ps(_mm512_loadu_ps(o + j), a));
}

/// dst[0..n) = bf16(o[j] * scale).
inline void store_row_bf16(const float* o, int64_t n, float scale, uint16_t* dst) {
  const __m512 c = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 in = first16(n - j);
    store_bf16(dst + j, _mm512_mul_ps(_mm512_maskz_loadu_ps(in, o + j), c), in);
  }
}

/// See AmxKernels::pack_queries.
inline void pack_queries(const uint16_t* q, int64_t stride, int64_t rows, int64_t head_dim,
                         int64_t dp, int64_t lanes, uint16_t* dst) {
  for (int64_t r = 0; r < lanes; ++r) {
    for (int64_t j = 0; j < dp; j += 32) {
      const __mmask32 in = r < rows ? first32(head_dim - j) : 0;
      _mm512_storeu_si512(dst + r * dp + j, _mm512_maskz_loadu_epi16(in, q + r * stride + j));
    }
  }
}

/// Dwords m (of 4) of each 128-bit lane of rows 4i .. 4i + 3 of a 16 x 16 dword block, lane L of
/// quad i, into x[4i + m]: the first two steps of the transpose in transpose16x16.
inline void transpose_within_lanes(__m512i (&x)[16]) {
  for (int i = 0; i < 16; i += 2) {
    const __m512i lo = _mm512_unpacklo_epi32(x[i], x[i + 1]);
    x[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
    x[i] = lo;
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512i a = x[i], b = x[i + 1], c = x[i + 2], d = x[i + 3];
    x[i] = _mm512_unpacklo_epi64(a, c);
    x[i + 1] = _mm512_unpackhi_epi64(a, c);
    x[i + 2] = _mm512_unpacklo_epi64(b, d);
    x[i + 3] = _mm512_unpackhi_epi64(b, d);
  }
}

/// Transposes a 16 x 16 block of dwords held as 16 rows: 64 shuffles (4 per row, on port 5),
/// where 16 VPGATHERDD would each load 16 dwords one by one.
inline void transpose16x16(__m512i (&x)[16]) {
  transpose_within_lanes(x);
  // x[4i + m] lane L now holds column 4L + m of rows 4i .. 4i + 3: a 4 x 4 transpose of 128-bit
  // lanes among x[m], x[4 + m], x[8 + m], x[12 + m] puts column 4L + m in x[4L + m].
  for (int m = 0; m < 4; ++m) {
    const __m512i r0 = _mm512_shuffle_i32x4(x[m], x[4 + m], 0x44);  // lanes 0, 1 | 0, 1
    const __m512i r1 = _mm512_shuffle_i32x4(x[m], x[4 + m], 0xee);  // lanes 2, 3 | 2, 3
    const __m512i r2 = _mm512_shuffle_i32x4(x[8 + m], x[12 + m], 0x44);
    const __m512i r3 = _mm512_shuffle_i32x4(x[8 + m], x[12 + m], 0xee);
    x[m] = _mm512_shuffle_i32x4(r0, r2, 0x88);      // lanes 0, 2 | 0, 2
    x[4 + m] = _mm512_shuffle_i32x4(r0, r2, 0xdd);  // lanes 1, 3 | 1, 3
    x[8 + m] = _mm512_shuffle_i32x4(r1, r3, 0x88);
    x[12 + m] = _mm512_shuffle_i32x4(r1, r3, 0xdd);
  }
}

/// See AmxKernels::pack_key_tile: 32 head dims (16 dwords) of each key as a row, transposed so
/// dword r of the 16 keys lands in row r. The masked loads give zeros for missing keys and dims,
/// including an odd head_dim's last pair's second half.
inline void pack_key_tile(const uint16_t* k, int64_t stride, int64_t keys, int64_t head_dim,
                          int64_t dp, uint32_t* dst) {
  for (int64_t j = 0; j < dp; j += 32) {
    const __mmask32 dims = first32(head_dim - j);
    __m512i x[16];
    for (int64_t n = 0; n < 16; ++n) {
      x[n] = n < keys ? _mm512_maskz_loadu_epi16(dims, k + n * stride + j) : _mm512_setzero_si512();
    }
    transpose16x16(x);
    for (int64_t r = 0; r < 16; ++r) _mm512_storeu_si512(dst + (j / 2 + r) * 16, x[r]);
  }
}

/// See AmxKernels::pack_value_chunk: rows 2r and 2r + 1 interleaved, 16 columns at a time.
inline void pack_value_chunk(const uint16_t* v, int64_t stride, int64_t keys, int64_t head_dim,
                             int64_t d_tiles, uint32_t* dst) {
  for (int64_t t = 0; t < d_tiles; ++t) {
    const __mmask16 cols = first16(head_dim - 16 * t);
    for (int64_t r = 0; r < 16; ++r) {
      const __mmask16 even = 2 * r < keys ? cols : 0, odd = 2 * r + 1 < keys ? cols : 0;
      const __m512i lo =
          _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(even, v + 2 * r * stride + 16 * t));
      const __m512i hi =
          _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(odd, v + (2 * r + 1) * stride + 16 * t));
      _mm512_storeu_si512(dst + (t * 16 + r) * 16, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

}  // namespace flashvision::detail::cpu::isa_amx
