// The Hopper forward's online softmax without a per-score max after a row's first key block.
//
// The exact online softmax spends an FMNMX per score, and quad shuffles per row, finding each key
// block's max before its exponentials can start. But the softmax is the same function against any
// max (OnlineSoftmax's lazy slack already lets probabilities reach 2^8): the max only keeps the
// exponentials from overflowing. So once every row of a warp has a max, a block's exponents x =
// s * scale_log2 - max are taken against it as it stands and left in the score registers, and the
// probabilities 2^x go straight into the P fragments of the next GEMM: an FFMA, an EX2 and an FADD
// a score. Only where a thread's share of a row's block sum passes 2^8 (an exponent past the slack,
// or one that overflowed to infinity) does the warp find the block's largest exponent from the x
// it kept, move the max past it and take that row's probabilities again, as the exact path would
// have. Nothing bounds the scores beforehand; the x kept in the registers is what makes the
// overflow recoverable. With O's rescale skipped after the fast path (update_and_pack's answer),
// on the H200 against the exact lazy softmax: -2..-16 % time on the D = 64-256 sweeps and the long
// cases, held at the power cap D = 64 / 128 / 256 N = 16384 516 -> 570, 630 -> 677, 734 -> 744
// TFLOP/s (bench/results/2026-12-02-s22, call 2).
#pragma once

#include <cmath>

#include "cuda/common/online_softmax.cuh"
#include "cuda/common/ptx.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/sm90/p_fragments.cuh"

namespace flashvision::detail::sm90 {

/// kOffsetLog2: OnlineSoftmax's scale of the probabilities (FP8: p_fragments.cuh); kShortChains:
/// its form of the exact path (a row's first block).
template <int kMTiles, bool kLazyMax, int kOffsetLog2 = 0, bool kShortChains = false>
struct StaleMaxSoftmax : OnlineSoftmax<kMTiles, kLazyMax, kOffsetLog2, kShortChains> {
  using Base = OnlineSoftmax<kMTiles, kLazyMax, kOffsetLog2, kShortChains>;
  using Base::row_max;
  using Base::row_sum;

  /// Folds a block of scores in and writes its probabilities as the A fragments `p` of O += P V
  /// (p_fragments.cuh); `correction` receives the factors O must still be
  /// multiplied by. `p` must not be in use by a GEMM in flight. `scores` is left holding the
  /// exponents (fast path) or the probabilities (exact path): either way, not scores any more.
  /// Returns whether O needs rescale() at all: not after the fast path, where every factor is 1,
  /// so that neither the lazy max's vote nor the multiplies of an exact one run on most blocks.
  /// The same for the whole warp.
  template <typename T, int kNTiles>
  __device__ __forceinline__ bool update_and_pack(
      float (&scores)[kMTiles][kNTiles][4], uint32_t (&p)[kMTiles][kNTiles * 8 / kPvStepKeys<T>][4],
      float scale_log2, float (&correction)[kMTiles][2]) {
    bool started = true;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      started &= row_max[m][0] != -INFINITY && row_max[m][1] != -INFINITY;
    }
    if (__all_sync(0xffffffffu, started)) {
      if (exponents_against_stale_max<T>(scores, p, scale_log2, correction)) return false;
      move_max(scores, scale_log2, correction);
    } else {
      Base::update_scores(scores, scale_log2, correction);
    }
    // Both other paths leave the probabilities in `scores`: one conversion serves them.
    pack_probabilities<T>(p, scores);
    return true;
  }

 private:
  /// The fast path: exponents x = s * scale_log2 - max left in `scores`, 2^x packed into `p`.
  /// Returns true when the warp is done (O's factors are all 1; `correction` is left holding the
  /// block sums, for no one to read); false when some thread's share of a row's block sum passed
  /// 2^8 (or is infinite), with `row_sum` untouched and `p` to be written again.
  template <typename T, int kNTiles>
  __device__ __forceinline__ bool exponents_against_stale_max(
      float (&scores)[kMTiles][kNTiles][4], uint32_t (&p)[kMTiles][kNTiles * 8 / kPvStepKeys<T>][4],
      float scale_log2, float (&correction)[kMTiles][2]) {
    // correction holds each row's block sum until the check: no other register to keep it in.
    bool over = false;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float max_scaled = row_max[m][half] * scale_log2 - kOffsetLog2;
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          float& x0 = scores[m][n][2 * half];
          float& x1 = scores[m][n][2 * half + 1];
          x0 = fmaf(x0, scale_log2, -max_scaled);
          x1 = fmaf(x1, scale_log2, -max_scaled);
          const float p0 = ptx::exp2_approx(x0);
          const float p1 = ptx::exp2_approx(x1);
          sum += p0;
          sum += p1;
          put_probability_pair<T>(p[m], n, half, p0, p1);
        }
        correction[m][half] = sum;
        // Not for NaN (a NaN score stays NaN in O, as on the exact path); yes for infinity.
        over |= sum > 256.0f;
      }
    }
    if (__any_sync(0xffffffffu, over)) return false;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        row_sum[m][half] += correction[m][half];
      }
    }
    return true;
  }

  /// After the fast path's check failed: each row whose largest exponent passed the lazy slack
  /// (infinity included) moves its max up by it; every row's probabilities are taken again from
  /// the exponents into `scores`, and O's factor and the sum follow. All lanes of the warp take
  /// part (quad shuffles).
  template <int kNTiles>
  __device__ __forceinline__ void move_max(float (&scores)[kMTiles][kNTiles][4], float scale_log2,
                                           float (&correction)[kMTiles][2]) {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float largest = -INFINITY;
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          largest = fmaxf(largest, fmaxf(scores[m][n][2 * half], scores[m][n][2 * half + 1]));
        }
        largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 1));
        largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, 2));
        // Past the slack, the max moves so that the largest probability is 2^kOffsetLog2.
        const float shift = largest > kMaxSlackLog2 ? largest - kOffsetLog2 : 0.0f;
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = scores[m][n][2 * half + e];
            x = ptx::exp2_approx(x - shift);
            sum += x;
          }
        }
        correction[m][half] = shift > 0.0f ? ptx::exp2_approx(-shift) : 1.0f;
        row_max[m][half] += shift / scale_log2;
        row_sum[m][half] = row_sum[m][half] * correction[m][half] + sum;
      }
    }
  }
};

}  // namespace flashvision::detail::sm90
