// The row-wise steps of the AMX forward in plain C++: the same functions as amx_rows_avx512.h,
// for kernels_amx_emulated.cpp (baseline ISA, any CPU).
#pragma once

#define FLASHVISION_CPU_ISA_NS isa_amx_emulated

#include <cmath>
#include <cstdint>

#include "cpu/amx_kernels.h"
#include "cpu/convert.h"

namespace flashvision::detail::cpu::isa_amx_emulated {

/// 2^x as amx_rows_avx512.h computes it: the same polynomial of x - floor(x), 0 below 2^-126.
inline float exp2_scalar(float x) {
  if (std::isnan(x)) return x;
  if (x < -126.0f) return 0.0f;
  const float n = std::floor(x);
  if (n > 127.0f) return __builtin_inff();
  const float f = x - n;
  float p = kExp2Poly[4];
  for (int k = 3; k >= 1; --k) p = p * f + kExp2Poly[k];
  p = p * f + 1.0f;
  return std::ldexp(p, static_cast<int>(n));
}

/// The max over j < n (n > 0) of s[j] * scale (which is always "past" amx_rows_avx512.h's bound
/// or not, as the contract there allows).
inline float scaled_max_past(const float* s, int64_t n, float scale, float) {
  float m = -__builtin_inff();
  for (int64_t j = 0; j < n; ++j) m = s[j] * scale > m ? s[j] * scale : m;
  return m;
}

/// As amx_rows_avx512.h; the row's sum goes to lane j % kAmxSumLanes as there.
inline void exp2_row_to_bf16(const float* s, int64_t n, int64_t padded, float scale, float shift,
                             uint16_t* p, float* sums, float alpha) {
  float partial[kAmxSumLanes] = {};
  for (int64_t j = 0; j < padded; ++j) {
    const float e = j < n ? exp2_scalar(s[j] * scale - shift) : 0.0f;
    partial[j % kAmxSumLanes] += e;
    p[j] = float_to_bf16(e);
  }
  for (int64_t k = 0; k < kAmxSumLanes; ++k) sums[k] = sums[k] * alpha + partial[k];
}

inline float row_total(const float* sums) {
  float total = 0.0f;
  for (int64_t k = 0; k < kAmxSumLanes; ++k) total += sums[k];
  return total;
}

inline void scale_row(float* o, int64_t n, float alpha) {
  for (int64_t j = 0; j < n; ++j) o[j] *= alpha;
}

inline void store_row_bf16(const float* o, int64_t n, float scale, uint16_t* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = float_to_bf16(o[j] * scale);
}

inline void pack_queries(const uint16_t* q, int64_t stride, int64_t rows, int64_t head_dim,
                         int64_t dp, int64_t lanes, uint16_t* dst) {
  for (int64_t r = 0; r < lanes; ++r) {
    for (int64_t j = 0; j < dp; ++j) {
      dst[r * dp + j] = r < rows && j < head_dim ? q[r * stride + j] : uint16_t{0};
    }
  }
}

inline void pack_key_tile(const uint16_t* k, int64_t stride, int64_t keys, int64_t head_dim,
                          int64_t dp, uint32_t* dst) {
  for (int64_t r = 0; r < dp / 2; ++r) {
    for (int64_t n = 0; n < 16; ++n) {
      const bool key = n < keys;
      const uint32_t lo = key && 2 * r < head_dim ? k[n * stride + 2 * r] : 0u;
      const uint32_t hi = key && 2 * r + 1 < head_dim ? k[n * stride + 2 * r + 1] : 0u;
      dst[r * 16 + n] = lo | hi << 16;
    }
  }
}

inline void pack_value_chunk(const uint16_t* v, int64_t stride, int64_t keys, int64_t head_dim,
                             int64_t d_tiles, uint32_t* dst) {
  for (int64_t t = 0; t < d_tiles; ++t) {
    for (int64_t r = 0; r < 16; ++r) {
      for (int64_t n = 0; n < 16; ++n) {
        const int64_t col = 16 * t + n;
        const bool in = col < head_dim;
        const uint32_t lo = in && 2 * r < keys ? v[2 * r * stride + col] : 0u;
        const uint32_t hi = in && 2 * r + 1 < keys ? v[(2 * r + 1) * stride + col] : 0u;
        dst[(t * 16 + r) * 16 + n] = lo | hi << 16;
      }
    }
  }
}

}  // namespace flashvision::detail::cpu::isa_amx_emulated
