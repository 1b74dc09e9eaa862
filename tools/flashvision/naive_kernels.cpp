// The naive baseline must not be a strawman: these loops are written so the compiler vectorizes
// them, register-block the two GEMM shapes attention needs, and are cloned for AVX-512 / AVX2+FMA
// / baseline x86-64 (the tool is built without -march, like the library), picked at load time.
#include "naive_kernels.h"

#include <algorithm>
#include <bit>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__INTEL_COMPILER)
#define FV_NAIVE_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FV_NAIVE_CLONES
#endif

namespace flashvision::tool::naive {

namespace {

constexpr int64_t kRowGroup = 4;   // rows sharing each load of the right-hand operand
constexpr int64_t kColTile = 64;   // keys per cached tile of panels in scores_block
constexpr int64_t kVecWidth = 16;  // accumulator columns held in registers per row
constexpr int64_t kSumTile = 64;   // rows of x per cached tile in weighted_rows
static_assert(kColTile % kPanelRows == 0, "score tiles hold whole panels");

/// exp(x) for x <= 0 in a form the vectorizer accepts (no libm call): 2^n * poly(r) with
/// r = x - n ln2 in [-ln2/2, ln2/2]; relative error ~2e-7, underflows to 0 below -87.
inline float exp_nonpositive(float x) {
  constexpr float kLog2e = 1.44269504f;
  constexpr float kLn2Hi = 0.693145752f;
  constexpr float kLn2Lo = 1.42860677e-6f;
  constexpr float kRoundMagic = 12582912.0f;      // 1.5 * 2^23: adding it rounds to an integer
  const float clamped = x > -87.0f ? x : -87.0f;  // a select, not std::max: it if-converts
  const float n = (clamped * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = clamped - n * kLn2Hi - n * kLn2Lo;
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float two_to_n = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return x < -87.0f ? 0.0f : p * two_to_n;
}

}  // namespace

void pack_panels(const float* b, int64_t b_stride, int64_t rows, int64_t dim, float* packed) {
  for (int64_t j0 = 0; j0 < rows; j0 += kPanelRows) {
    float* panel = packed + j0 * dim;
    for (int64_t i = 0; i < kPanelRows; ++i) {
      const bool real = j0 + i < rows;
      for (int64_t d = 0; d < dim; ++d)
        panel[d * kPanelRows + i] = real ? b[(j0 + i) * b_stride + d] : 0.0f;
    }
  }
}

FV_NAIVE_CLONES
void scores_block(const float* a, int64_t a_stride, int64_t rows, const float* packed_b,
                  int64_t cols, int64_t dim, float scale, float* s, int64_t s_stride) {
  // Tiles of kColTile keys keep their panels in cache while every row group reads them.
  for (int64_t j0 = 0; j0 < cols; j0 += kColTile) {
    const int64_t tile_end = std::min(cols, j0 + kColTile);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowGroup) {
      // A short last group repeats its final row; the extra results are not stored.
      const float* a_rows[kRowGroup];
      for (int64_t r = 0; r < kRowGroup; ++r) a_rows[r] = a + std::min(r0 + r, rows - 1) * a_stride;
      for (int64_t c0 = j0; c0 < tile_end; c0 += kPanelRows) {
        const float* panel = packed_b + c0 * dim;
        float acc[kRowGroup][kPanelRows] = {};
        for (int64_t d = 0; d < dim; ++d) {
          for (int64_t r = 0; r < kRowGroup; ++r) {
            const float ar = a_rows[r][d];
#pragma omp simd
            for (int64_t c = 0; c < kPanelRows; ++c) acc[r][c] += ar * panel[d * kPanelRows + c];
          }
        }
        const int64_t store_cols = std::min(kPanelRows, cols - c0);
        for (int64_t r = 0; r < std::min(kRowGroup, rows - r0); ++r) {
          float* out = s + (r0 + r) * s_stride + c0;
          for (int64_t c = 0; c < store_cols; ++c) out[c] = acc[r][c] * scale;
        }
      }
    }
  }
}

FV_NAIVE_CLONES
void weighted_rows(const float* w, int64_t w_out_step, int64_t w_sum_step, int64_t outs,
                   int64_t sums, const float* x, int64_t x_stride, int64_t dim, float alpha,
                   float* c, int64_t c_stride) {
  // x is walked one tile of rows at a time so that the tile stays in cache while every output
  // row group reads it; c holds the running sums between tiles and is scaled by alpha at the end.
  for (int64_t s0 = 0; s0 < sums; s0 += kSumTile) {
    const int64_t s_end = std::min(sums, s0 + kSumTile);
    for (int64_t o0 = 0; o0 < outs; o0 += kRowGroup) {
      // A short last group repeats its final row; the extra results are not stored.
      const float* w_rows[kRowGroup];
      for (int64_t r = 0; r < kRowGroup; ++r)
        w_rows[r] = w + std::min(o0 + r, outs - 1) * w_out_step;
      for (int64_t d0 = 0; d0 < dim; d0 += kVecWidth) {
        const int64_t width = std::min(kVecWidth, dim - d0);
        float acc[kRowGroup][kVecWidth] = {};
        if (width == kVecWidth) {
          for (int64_t s = s0; s < s_end; ++s) {
            const float* xs = x + s * x_stride + d0;
            for (int64_t r = 0; r < kRowGroup; ++r) {
              const float weight = w_rows[r][s * w_sum_step];
#pragma omp simd
              for (int64_t d = 0; d < kVecWidth; ++d) acc[r][d] += weight * xs[d];
            }
          }
        } else {
          for (int64_t s = s0; s < s_end; ++s) {
            const float* xs = x + s * x_stride + d0;
            for (int64_t r = 0; r < kRowGroup; ++r) {
              const float weight = w_rows[r][s * w_sum_step];
              for (int64_t d = 0; d < width; ++d) acc[r][d] += weight * xs[d];
            }
          }
        }
        for (int64_t r = 0; r < std::min(kRowGroup, outs - o0); ++r) {
          float* out = c + (o0 + r) * c_stride + d0;
          for (int64_t d = 0; d < width; ++d) out[d] = (s0 == 0 ? 0.0f : out[d]) + acc[r][d];
        }
      }
    }
  }
  if (alpha == 1.0f) return;
  for (int64_t o = 0; o < outs; ++o) {
#pragma omp simd
    for (int64_t d = 0; d < dim; ++d) c[o * c_stride + d] *= alpha;
  }
}

FV_NAIVE_CLONES
void softmax_row(float* s, int64_t visible, int64_t cols) {
  float row_max = -3.0e38f;
#pragma omp simd reduction(max : row_max)
  for (int64_t j = 0; j < visible; ++j) row_max = s[j] > row_max ? s[j] : row_max;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < visible; ++j) {
    s[j] = exp_nonpositive(s[j] - row_max);
    sum += s[j];
  }
  const float inv_sum = visible > 0 ? 1.0f / sum : 0.0f;
#pragma omp simd
  for (int64_t j = 0; j < visible; ++j) s[j] *= inv_sum;
  std::fill(s + visible, s + cols, 0.0f);
}

FV_NAIVE_CLONES
void softmax_grad_row(const float* p, float* dp, float delta, int64_t cols) {
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j) dp[j] = p[j] * (dp[j] - delta);
}

FV_NAIVE_CLONES
float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace flashvision::tool::naive
