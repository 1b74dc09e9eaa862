// The table of micro-kernels one instruction set provides to the CPU drivers.
//
// forward.cpp and backward.cpp are compiled for the baseline ISA and only ever reach SIMD code
// through a KernelTable, so no AVX instruction can run before cpu_features.cpp has checked CPUID.
// Every tile the drivers hand over is fp32 and "transposed": query rows are the SIMD lanes, so the
// softmax over keys is element-wise across vectors and never needs a horizontal reduction.
#pragma once

#include <cstdint>

#include "flashvision/tensor.h"

namespace flashvision::detail::cpu {

/// Every lane count and padded width the drivers use is a multiple of this, so it is a multiple
/// of each ISA's vector width (8 for AVX2 and portable, 16 for AVX-512).
inline constexpr int64_t kLanePad = 16;

/// C[m][n] (+)= sum_p A(m, p) * B[p][n], all fp32.
///
/// A(i, p) = a[i * a_row_stride + p * a_col_stride] and one of the two strides must be 1, so A can
/// be a row-major block (K, V, P^T) or a transposed view of one (V^T, K^T) without a copy.
/// B and C are row-major; n must be a multiple of kLanePad and B/C rows must hold n floats.
struct GemmArgs {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  const float* a = nullptr;
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;  ///< false: C = A * B
  /// When set (n floats): col_max[j] = max(col_max[j], max_i C[i][j]), taken from the registers
  /// as C is stored, so the forward's softmax needs no separate pass over S^T for its max.
  float* col_max = nullptr;
};

/// A [rows][lanes] fp32 tile of transposed scores: row j is key j, lane i is query i.
struct ScoreTile {
  float* data = nullptr;
  int64_t ld = 0;     ///< floats between rows
  int64_t rows = 0;   ///< keys in this block
  int64_t lanes = 0;  ///< query lanes, a multiple of kLanePad
  /// Per lane, the number of keys of this block the query may see (as float), or nullptr when
  /// every query sees every key of the block.
  const float* visible = nullptr;
  /// Per lane, the max over the tile's rows when the GEMM that wrote it took it
  /// (GemmArgs::col_max), or nullptr. Ignored where `visible` is set: hidden scores must not count.
  const float* max = nullptr;
};

/// Online-softmax update of one key block (forward).
///
/// Scores are in log2 units (q was scaled by softmax_scale * log2(e)). row_max holds per lane the
/// reference that P, row_sum and o are scaled to: a score seen before, at most a small slack below
/// the largest (it moves only when a block passes it by more than the slack, so o is rarely
/// rescaled). On return the tile holds P^T = exp2(S^T - m_new) (0 where masked), row_max and
/// row_sum (per lane) are updated and every row of o ([o_rows][o_ld], lanes as columns) is rescaled
/// by exp2(m_old - m_new).
using OnlineSoftmaxFn = void (*)(const ScoreTile& s, float* row_max, float* row_sum, float* o,
                                 int64_t o_rows, int64_t o_ld);

/// Backward element-wise step: s (S^T in log2 units) becomes P^T = exp2(S^T - lse2) (0 where
/// masked) and dp (dP^T, same layout as s) becomes dS^T = P^T * (dP^T - dvec).
/// lse2 is lse * log2(e) per lane; +inf there gives P = 0 (rows that see no key, padding lanes).
using SoftmaxGradFn = void (*)(const ScoreTile& s, float* dp, const float* lse2, const float* dvec);

/// Converts a [rows][cols] block of `dtype` (row stride src_row_stride elements) to fp32, times
/// scale, into dst[r][c] (row stride ld); columns cols..padded_cols are zeroed.
using PackRowsFn = void (*)(DType dtype, const void* src, int64_t src_row_stride, int64_t rows,
                            int64_t cols, float scale, float* dst, int64_t ld, int64_t padded_cols);

/// Like PackRowsFn but transposed: dst[c][r] = scale * src[r][c]; rows..padded_rows are zeroed.
using PackTransposedFn = void (*)(DType dtype, const void* src, int64_t src_row_stride,
                                  int64_t rows, int64_t cols, float scale, float* dst, int64_t ld,
                                  int64_t padded_rows);

/// dst[r][c] = scale * src[r * ld + c] converted to `dtype` (row stride dst_row_stride elements).
using StoreRowsFn = void (*)(DType dtype, const float* src, int64_t ld, int64_t rows, int64_t cols,
                             float scale, void* dst, int64_t dst_row_stride);

/// dst[r][c] = row_scale[r] * src[c * ld + r] converted to `dtype`: writes a lanes-as-columns
/// accumulator (O^T, dQ^T) back as rows.
using StoreTransposedFn = void (*)(DType dtype, const float* src, int64_t ld, int64_t rows,
                                   int64_t cols, const float* row_scale, void* dst,
                                   int64_t dst_row_stride);

/// sum_i a[i] * b[i] over n elements of `dtype`, accumulated in fp32.
using RowDotFn = float (*)(DType dtype, const void* a, const void* b, int64_t n);

/// The micro-kernels of one instruction set.
struct KernelTable {
  const char* name = nullptr;  ///< "cpu-avx512", "cpu-avx2" or "cpu-portable"
  void (*gemm)(const GemmArgs&) = nullptr;
  OnlineSoftmaxFn online_softmax = nullptr;
  SoftmaxGradFn softmax_grad = nullptr;
  PackRowsFn pack_rows = nullptr;
  PackTransposedFn pack_transposed = nullptr;
  StoreRowsFn store_rows = nullptr;
  StoreTransposedFn store_transposed = nullptr;
  RowDotFn row_dot = nullptr;
};

/// Scalar code for any CPU (compiled for the baseline ISA).
const KernelTable& portable_kernel_table();
#ifdef FLASHVISION_CPU_HAVE_AVX2
/// AVX2 + FMA + F16C kernels; call only when the CPU has them.
const KernelTable& avx2_kernel_table();
#endif
#ifdef FLASHVISION_CPU_HAVE_AVX512
/// AVX-512 F/BW/VL/DQ kernels; native_bf16 selects the AVX512_BF16 fp32->bf16 conversion.
const KernelTable& avx512_kernel_table(bool native_bf16);
#endif

}  // namespace flashvision::detail::cpu
