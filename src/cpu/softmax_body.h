// Vectorized exp2 and the two element-wise softmax steps (forward online update, backward dS),
// written once for every ISA (see gemm_body.h for how a kernels_*.cpp includes it).
//
// Tiles are transposed (row = key, lane = query), so the running max and sum of a query are one
// lane of a vector and a "row max" is an element-wise max over the tile's rows.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include a cpu/simd_*.h header first"
#endif

#include <cstdint>

#include "cpu/kernels.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

/// 2^x with a relative error of about 1e-7 (fp32 rounding level). x <= -127 gives exactly 0, so
/// -inf (a masked score) gives 0; NaN stays NaN. Large x saturates at 2^127 (AVX2, portable) or
/// reaches +inf (AVX-512); the softmax only passes x <= 0.
inline Vec exp2_vec(Vec x) {
  x = clamp_exponent(x);
  // On AVX-512 x = -inf makes f NaN; times_pow2 zeroes that lane by n alone.
  const Vec n = round_nearest(x);
  const Vec f = x - n;  // in [-0.5, 0.5]
  // Near-minimax polynomial for 2^f on [-0.5, 0.5], relative error 2e-9 before fp32 rounding.
  Vec p = broadcast(1.53533590292498e-4f);
  p = fma(p, f, broadcast(1.3398876164064065e-3f));
  p = fma(p, f, broadcast(9.618437383346213e-3f));
  p = fma(p, f, broadcast(5.55033246596833e-2f));
  p = fma(p, f, broadcast(2.4022647913228187e-1f));
  p = fma(p, f, broadcast(6.9314720285808e-1f));
  p = fma(p, f, broadcast(1.0f));
  return times_pow2(p, n);
}

/// Sets scores of keys a lane may not see to -inf and returns the element-wise max over rows (the
/// one the GEMM took, when it did and nothing is hidden).
inline Vec mask_and_max(const ScoreTile& s, int64_t lane) {
  const Vec neg_inf = broadcast(-__builtin_inff());
  Vec row_max = neg_inf;
  float* col = s.data + lane;
  if (s.visible == nullptr) {
    if (s.max != nullptr) return load(s.max + lane);
    for (int64_t j = 0; j < s.rows; ++j) row_max = max(row_max, load(col + j * s.ld));
    return row_max;
  }
  const Vec visible = load(s.visible + lane);
  for (int64_t j = 0; j < s.rows; ++j) {
    const Vec sj =
        select_lt(broadcast(static_cast<float>(j)), visible, load(col + j * s.ld), neg_inf);
    store(col + j * s.ld, sj);
    row_max = max(row_max, sj);
  }
  return row_max;
}

/// How far (log2 units) a score may pass the reference max before the reference moves to it: P is
/// then at most 2^8, which costs no precision in fp32 and leaves the sums far from overflow.
inline constexpr float kMaxSlack = 8.0f;

/// See OnlineSoftmaxFn.
inline void online_softmax(const ScoreTile& s, float* row_max, float* row_sum, float* o,
                           int64_t o_rows, int64_t o_ld) {
  const Vec lowest = broadcast(-0x1.fffffep127f);
  const Vec slack = broadcast(kMaxSlack);
  for (int64_t lane = 0; lane < s.lanes; lane += Vec::kWidth) {
    const Vec m_old = load(row_max + lane);
    // The reference moves only when a score passes it by more than the slack (the first visible
    // block's always does, from -inf), so the pass over O below runs rarely after the first block.
    const Vec block_max = mask_and_max(s, lane);
    const Vec m_new = select_lt(m_old + slack, block_max, block_max, m_old);
    // A lane that has seen no visible key yet keeps m = -inf; subtracting 0 instead of -inf keeps
    // exp2(-inf - -inf) = NaN out and gives P = 0 and alpha = 0 (nothing to rescale).
    const Vec m_use = select_lt(m_new, lowest, zero(), m_new);
    const Vec alpha = exp2_vec(m_old - m_use);
    Vec sum = zero();
    float* col = s.data + lane;
    for (int64_t j = 0; j < s.rows; ++j) {
      const Vec p = exp2_vec(load(col + j * s.ld) - m_use);
      store(col + j * s.ld, p);
      sum = sum + p;
    }
    store(row_sum + lane, fma(load(row_sum + lane), alpha, sum));
    store(row_max + lane, m_new);
    // Where no lane's reference moved, alpha is 1 in every lane; where no lane had a reference
    // yet (the first visible block), O is still all zeros. Either way the pass over O changes
    // nothing.
    if (!any_lt(m_old, m_new) || !any_lt(lowest, m_old)) continue;
    for (int64_t d = 0; d < o_rows; ++d)
      store(o + d * o_ld + lane, load(o + d * o_ld + lane) * alpha);
  }
}

/// See SoftmaxGradFn.
inline void softmax_grad(const ScoreTile& s, float* dp, const float* lse2, const float* dvec) {
  const Vec zero_vec = zero();
  for (int64_t lane = 0; lane < s.lanes; lane += Vec::kWidth) {
    const Vec lse = load(lse2 + lane);
    const Vec dv = load(dvec + lane);
    const Vec visible = s.visible != nullptr ? load(s.visible + lane) : broadcast(__builtin_inff());
    float* s_col = s.data + lane;
    float* dp_col = dp + lane;
    for (int64_t j = 0; j < s.rows; ++j) {
      const Vec p = select_lt(broadcast(static_cast<float>(j)), visible,
                              exp2_vec(load(s_col + j * s.ld) - lse), zero_vec);
      store(s_col + j * s.ld, p);
      store(dp_col + j * s.ld, p * (load(dp_col + j * s.ld) - dv));
    }
  }
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
