// Vectorizable fp32 building blocks of the naive baseline (compiled for several x86 levels).
#pragma once

#include <cstdint>

namespace flashvision::tool::naive {

/// Keys per packed panel: pack_panels() lays out b as panels of this many rows.
inline constexpr int64_t kPanelRows = 16;

/// Floats pack_panels() writes for `rows` x `dim`.
inline int64_t packed_size(int64_t rows, int64_t dim) {
  return (rows + kPanelRows - 1) / kPanelRows * kPanelRows * dim;
}

/// Packs b (rows x dim) as panels of kPanelRows rows, each stored d-major: packed[p][d][i] =
/// b[p kPanelRows + i][d], zero past the last row. The score GEMM then reads each panel
/// sequentially, whatever b's row stride (power-of-two strides would alias in the caches).
void pack_panels(const float* b, int64_t b_stride, int64_t rows, int64_t dim, float* packed);

/// s[r][j] = scale * dot(a[r], b[j]) for r < rows, j < cols, with b given by pack_panels().
void scores_block(const float* a, int64_t a_stride, int64_t rows, const float* packed_b,
                  int64_t cols, int64_t dim, float scale, float* s, int64_t s_stride);

/// c[o] = alpha * sum_s w(o, s) * x[s] for o < outs, s < sums, where w(o, s) =
/// w[o * w_out_step + s * w_sum_step]; c rows are overwritten. With (stride, 1) this is P X,
/// with (1, stride) it is P^T X.
void weighted_rows(const float* w, int64_t w_out_step, int64_t w_sum_step, int64_t outs,
                   int64_t sums, const float* x, int64_t x_stride, int64_t dim, float alpha,
                   float* c, int64_t c_stride);

/// In place: s[0, visible) becomes softmax(s[0, visible)); s[visible, cols) becomes 0.
void softmax_row(float* s, int64_t visible, int64_t cols);

/// In place: dp becomes dS = p * (dp - delta).
void softmax_grad_row(const float* p, float* dp, float delta, int64_t cols);

/// sum a[i] * b[i].
float dot(const float* a, const float* b, int64_t n);

}  // namespace flashvision::tool::naive
