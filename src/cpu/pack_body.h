// Conversion between the caller's tensors (f32, f16, bf16; any row stride) and the fp32 tiles the
// kernels work on, plain and transposed, written once for every ISA (see gemm_body.h).
// Transposes go through 8x8 register blocks; ragged edges fall back to one element at a time.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include a cpu/simd_*.h header first"
#endif

#include <cstdint>

#include "cpu/kernels.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

template <DType kType>
void pack_rows_typed(const void* src_void, int64_t src_row_stride, int64_t rows, int64_t cols,
                     float scale, float* dst, int64_t ld, int64_t padded_cols) {
  const auto* src = static_cast<const Storage<kType>*>(src_void);
  const Vec8 scale8 = broadcast8(scale);
  for (int64_t r = 0; r < rows; ++r) {
    const Storage<kType>* in = src + r * src_row_stride;
    float* out = dst + r * ld;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) store8<DType::f32>(out + c, mul8(load8<kType>(in + c), scale8));
    for (; c < cols; ++c) out[c] = load1<kType>(in + c) * scale;
    for (; c < padded_cols; ++c) out[c] = 0.0f;
  }
}

template <DType kType>
void pack_transposed_typed(const void* src_void, int64_t src_row_stride, int64_t rows, int64_t cols,
                           float scale, float* dst, int64_t ld, int64_t padded_rows) {
  const auto* src = static_cast<const Storage<kType>*>(src_void);
  const Vec8 scale8 = broadcast8(scale);
  const int64_t full_rows = rows / 8 * 8;
  const int64_t full_cols = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < full_rows; r0 += 8) {
    for (int64_t c0 = 0; c0 < full_cols; c0 += 8) {
      Vec8 block[8];
      for (int i = 0; i < 8; ++i) {
        block[i] = mul8(load8<kType>(src + (r0 + i) * src_row_stride + c0), scale8);
      }
      transpose8(block);
      for (int i = 0; i < 8; ++i) store8<DType::f32>(dst + (c0 + i) * ld + r0, block[i]);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t first_col = r < full_rows ? full_cols : 0;
    for (int64_t c = first_col; c < cols; ++c) {
      dst[c * ld + r] = load1<kType>(src + r * src_row_stride + c) * scale;
    }
  }
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = rows; r < padded_rows; ++r) dst[c * ld + r] = 0.0f;
  }
}

template <DType kType, bool kNativeBf16>
void store_rows_typed(const float* src, int64_t ld, int64_t rows, int64_t cols, float scale,
                      void* dst_void, int64_t dst_row_stride) {
  auto* dst = static_cast<Storage<kType>*>(dst_void);
  const Vec8 scale8 = broadcast8(scale);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = src + r * ld;
    Storage<kType>* out = dst + r * dst_row_stride;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      store8<kType, kNativeBf16>(out + c, mul8(load8<DType::f32>(in + c), scale8));
    }
    for (; c < cols; ++c) store1<kType, kNativeBf16>(out + c, in[c] * scale);
  }
}

template <DType kType, bool kNativeBf16>
void store_transposed_typed(const float* src, int64_t ld, int64_t rows, int64_t cols,
                            const float* row_scale, void* dst_void, int64_t dst_row_stride) {
  auto* dst = static_cast<Storage<kType>*>(dst_void);
  const int64_t full_rows = rows / 8 * 8;
  const int64_t full_cols = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < full_rows; r0 += 8) {
    const Vec8 scale8 = load8<DType::f32>(row_scale + r0);
    for (int64_t c0 = 0; c0 < full_cols; c0 += 8) {
      Vec8 block[8];
      for (int i = 0; i < 8; ++i)
        block[i] = mul8(load8<DType::f32>(src + (c0 + i) * ld + r0), scale8);
      transpose8(block);
      for (int i = 0; i < 8; ++i) {
        store8<kType, kNativeBf16>(dst + (r0 + i) * dst_row_stride + c0, block[i]);
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t first_col = r < full_rows ? full_cols : 0;
    for (int64_t c = first_col; c < cols; ++c) {
      store1<kType, kNativeBf16>(dst + r * dst_row_stride + c, src[c * ld + r] * row_scale[r]);
    }
  }
}

template <DType kType>
float row_dot_typed(const void* a_void, const void* b_void, int64_t n) {
  const auto* a = static_cast<const Storage<kType>*>(a_void);
  const auto* b = static_cast<const Storage<kType>*>(b_void);
  Vec8 acc = broadcast8(0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = fma8(load8<kType>(a + i), load8<kType>(b + i), acc);
  float sum = sum8(acc);
  for (; i < n; ++i) sum += load1<kType>(a + i) * load1<kType>(b + i);
  return sum;
}

/// See PackRowsFn.
inline void pack_rows(DType dtype, const void* src, int64_t src_row_stride, int64_t rows,
                      int64_t cols, float scale, float* dst, int64_t ld, int64_t padded_cols) {
  switch (dtype) {  // validation admits only f32, f16 and bf16
    case DType::f16:
      return pack_rows_typed<DType::f16>(src, src_row_stride, rows, cols, scale, dst, ld,
                                         padded_cols);
    case DType::bf16:
      return pack_rows_typed<DType::bf16>(src, src_row_stride, rows, cols, scale, dst, ld,
                                          padded_cols);
    default:
      return pack_rows_typed<DType::f32>(src, src_row_stride, rows, cols, scale, dst, ld,
                                         padded_cols);
  }
}

/// See PackTransposedFn.
inline void pack_transposed(DType dtype, const void* src, int64_t src_row_stride, int64_t rows,
                            int64_t cols, float scale, float* dst, int64_t ld,
                            int64_t padded_rows) {
  switch (dtype) {
    case DType::f16:
      return pack_transposed_typed<DType::f16>(src, src_row_stride, rows, cols, scale, dst, ld,
                                               padded_rows);
    case DType::bf16:
      return pack_transposed_typed<DType::bf16>(src, src_row_stride, rows, cols, scale, dst, ld,
                                                padded_rows);
    default:
      return pack_transposed_typed<DType::f32>(src, src_row_stride, rows, cols, scale, dst, ld,
                                               padded_rows);
  }
}

/// See StoreRowsFn.
template <bool kNativeBf16>
void store_rows(DType dtype, const float* src, int64_t ld, int64_t rows, int64_t cols, float scale,
                void* dst, int64_t dst_row_stride) {
  switch (dtype) {
    case DType::f16:
      return store_rows_typed<DType::f16, kNativeBf16>(src, ld, rows, cols, scale, dst,
                                                       dst_row_stride);
    case DType::bf16:
      return store_rows_typed<DType::bf16, kNativeBf16>(src, ld, rows, cols, scale, dst,
                                                        dst_row_stride);
    default:
      return store_rows_typed<DType::f32, kNativeBf16>(src, ld, rows, cols, scale, dst,
                                                       dst_row_stride);
  }
}

/// See StoreTransposedFn.
template <bool kNativeBf16>
void store_transposed(DType dtype, const float* src, int64_t ld, int64_t rows, int64_t cols,
                      const float* row_scale, void* dst, int64_t dst_row_stride) {
  switch (dtype) {
    case DType::f16:
      return store_transposed_typed<DType::f16, kNativeBf16>(src, ld, rows, cols, row_scale, dst,
                                                             dst_row_stride);
    case DType::bf16:
      return store_transposed_typed<DType::bf16, kNativeBf16>(src, ld, rows, cols, row_scale, dst,
                                                              dst_row_stride);
    default:
      return store_transposed_typed<DType::f32, kNativeBf16>(src, ld, rows, cols, row_scale, dst,
                                                             dst_row_stride);
  }
}

/// See RowDotFn.
inline float row_dot(DType dtype, const void* a, const void* b, int64_t n) {
  switch (dtype) {
    case DType::f16: return row_dot_typed<DType::f16>(a, b, n);
    case DType::bf16: return row_dot_typed<DType::bf16>(a, b, n);
    default: return row_dot_typed<DType::f32>(a, b, n);
  }
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
