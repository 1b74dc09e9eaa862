// Portable "vectors": fixed-size float arrays with element loops the compiler may vectorize for
// whatever baseline the build targets. Same interface as simd_avx2.h and simd_avx512.h.
#pragma once

#define FLASHVISION_CPU_ISA_NS isa_portable

#include <cstdint>

#include "cpu/convert.h"

namespace flashvision::detail::cpu::isa_portable {

/// Rows x vectors of the register-blocked GEMM tile (sized for 16 SSE registers).
inline constexpr int kGemmRows = 4;
inline constexpr int kGemmVecs = 2;

/// The wide vector of the compute kernels.
struct Vec {
  static constexpr int kWidth = 8;
  float v[kWidth];
};

/// The 8-lane vector of the conversion and transpose kernels.
struct Vec8 {
  float v[8];
};

inline Vec load(const float* p) {
  Vec r;
  for (int i = 0; i < Vec::kWidth; ++i) r.v[i] = p[i];
  return r;
}
inline void store(float* p, Vec a) {
  for (int i = 0; i < Vec::kWidth; ++i) p[i] = a.v[i];
}
inline Vec broadcast(float x) {
  Vec r;
  for (float& e : r.v) e = x;
  return r;
}
inline Vec zero() { return broadcast(0.0f); }

inline Vec operator+(Vec a, Vec b) {
  for (int i = 0; i < Vec::kWidth; ++i) a.v[i] += b.v[i];
  return a;
}
inline Vec operator-(Vec a, Vec b) {
  for (int i = 0; i < Vec::kWidth; ++i) a.v[i] -= b.v[i];
  return a;
}
inline Vec operator*(Vec a, Vec b) {
  for (int i = 0; i < Vec::kWidth; ++i) a.v[i] *= b.v[i];
  return a;
}
/// a * b + c.
inline Vec fma(Vec a, Vec b, Vec c) {
  for (int i = 0; i < Vec::kWidth; ++i) c.v[i] += a.v[i] * b.v[i];
  return c;
}
/// Like x86 maxps: b where either is NaN, so a NaN in b propagates.
inline Vec max(Vec a, Vec b) {
  for (int i = 0; i < Vec::kWidth; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
  return a;
}
/// Like x86 minps: b where either is NaN.
inline Vec min(Vec a, Vec b) {
  for (int i = 0; i < Vec::kWidth; ++i) a.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
  return a;
}
/// a < b ? x : y per lane.
inline Vec select_lt(Vec a, Vec b, Vec x, Vec y) {
  for (int i = 0; i < Vec::kWidth; ++i) x.v[i] = a.v[i] < b.v[i] ? x.v[i] : y.v[i];
  return x;
}
/// True when a < b in any lane.
inline bool any_lt(Vec a, Vec b) {
  bool any = false;
  for (int i = 0; i < Vec::kWidth; ++i) any = any || a.v[i] < b.v[i];
  return any;
}
/// Round to the nearest integer, ties to even; valid for |x| < 2^22.
inline Vec round_nearest(Vec a) {
  // Adding 1.5 * 2^23 leaves no fraction bits, so the FPU's round-to-nearest-even does the work.
  constexpr float kMagic = 0x1.8p23f;
  for (float& e : a.v) e = (e + kMagic) - kMagic;
  return a;
}
/// x limited to [-127, 127], the exponents times_pow2 can build; a NaN x stays NaN.
inline Vec clamp_exponent(Vec x) { return min(broadcast(127.0f), max(broadcast(-127.0f), x)); }
/// p * 2^n for integral n in [-127, 127], built in the exponent bits; n = -127 gives 0.
inline Vec times_pow2(Vec p, Vec n) {
  for (int i = 0; i < Vec::kWidth; ++i) {
    p.v[i] *= bits_float(static_cast<uint32_t>(static_cast<int32_t>(n.v[i]) + 127) << 23);
  }
  return p;
}

template <DType kType>
inline float load1(const Storage<kType>* p) {
  if constexpr (kType == DType::f16) {
    return f16_to_float(*p);
  } else if constexpr (kType == DType::bf16) {
    return bf16_to_float(*p);
  } else {
    return *p;
  }
}

/// Stores x as `kType`; kNativeBf16 only matters to AVX-512.
template <DType kType, bool kNativeBf16 = false>
inline void store1(Storage<kType>* p, float x) {
  if constexpr (kType == DType::f16) {
    *p = float_to_f16(x);
  } else if constexpr (kType == DType::bf16) {
    *p = float_to_bf16(x);
  } else {
    *p = x;
  }
}

template <DType kType>
inline Vec8 load8(const Storage<kType>* p) {
  Vec8 r;
  for (int i = 0; i < 8; ++i) r.v[i] = load1<kType>(p + i);
  return r;
}

template <DType kType, bool kNativeBf16 = false>
inline void store8(Storage<kType>* p, Vec8 a) {
  for (int i = 0; i < 8; ++i) store1<kType>(p + i, a.v[i]);
}

inline Vec8 broadcast8(float x) {
  Vec8 r;
  for (float& e : r.v) e = x;
  return r;
}
inline Vec8 mul8(Vec8 a, Vec8 b) {
  for (int i = 0; i < 8; ++i) a.v[i] *= b.v[i];
  return a;
}
inline Vec8 fma8(Vec8 a, Vec8 b, Vec8 c) {
  for (int i = 0; i < 8; ++i) c.v[i] += a.v[i] * b.v[i];
  return c;
}
inline float sum8(Vec8 a) {
  float s = 0.0f;
  for (float e : a.v) s += e;
  return s;
}
/// Transposes the 8x8 block held in rows[0..7].
inline void transpose8(Vec8 (&rows)[8]) {
  for (int i = 0; i < 8; ++i) {
    for (int j = i + 1; j < 8; ++j) {
      const float t = rows[i].v[j];
      rows[i].v[j] = rows[j].v[i];
      rows[j].v[i] = t;
    }
  }
}

}  // namespace flashvision::detail::cpu::isa_portable
