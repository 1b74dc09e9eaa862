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
//
// Where Q comes scaled by scale * log2(e) (FwdParams::q_prescaled: scale_log2 is 1), a row's first
// block anchors its max at 0 when it lies in a window its dtype keeps exact (ZeroAnchor), and a
// warp whose rows are all anchored takes 2^s straight from the accumulators: an EX2 and an FADD a
// score, without the FFMA. The same check then guards the range: a thread's share of a block sum
// past the window's bound moves the max as above. Without a causal mask (no row of a first block is
// empty) the first block itself takes that path against 0 before its max is known, and the exact
// path takes it again where a row's sums leave the window (update_and_pack's first_at_zero).
#pragma once

#include <cmath>
#include <type_traits>

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
  /// The same for the whole warp. `first_at_zero`: a row's first block may take the fast path
  /// against a max of 0 without finding its max, where the scores carry the scale and no row of
  /// the block can be empty (no causal mask): most rows' max would be anchored there anyway.
  template <typename T, int kNTiles>
  __device__ __forceinline__ bool update_and_pack(
      float (&scores)[kMTiles][kNTiles][4], uint32_t (&p)[kMTiles][kNTiles * 8 / kPvStepKeys<T>][4],
      float scale_log2, float (&correction)[kMTiles][2], bool first_at_zero = false) {
    bool started = true, anchored = true;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      started &= row_max[m][0] != -INFINITY && row_max[m][1] != -INFINITY;
      anchored &= row_max[m][0] == 0.0f && row_max[m][1] == 0.0f;
    }
    if (__all_sync(0xffffffffu, started)) {
      // Scores that carry the scale, against a max of 0 in every row: nothing to subtract.
      if (kOffsetLog2 == 0 && scale_log2 == 1.0f && __all_sync(0xffffffffu, anchored)) {
        if (exponents_against_stale_max<T, true>(scores, p, scale_log2, correction)) return false;
      } else if (exponents_against_stale_max<T, false>(scores, p, scale_log2, correction)) {
        return false;
      }
      move_max(scores, scale_log2, correction);
    } else if (kOffsetLog2 == 0 && first_at_zero && scale_log2 == 1.0f &&
               exponents_against_stale_max<T, true, true>(scores, p, scale_log2, correction)) {
      return false;
    } else {
      Base::update_scores(scores, scale_log2, correction, zero_anchor<T>(scale_log2));
    }
    // Both other paths leave the probabilities in `scores`: one conversion serves them.
    pack_probabilities<T>(p, scores);
    return true;
  }

 private:
  /// The window in which a row's first max is taken as 0 (OnlineSoftmax's ZeroAnchor), where the
  /// scores carry the scale (scale_log2 1): probabilities up to 2^32 times the row's largest
  /// stay inside bf16's range (fp32's) and O's fp32, and its keys' down to 2^-64 above fp32's
  /// flush to zero; f16's P holds at most 65504, and its normal range ends at 2^-14. None in
  /// FP8, whose probabilities carry an offset.
  template <typename T>
  static constexpr ZeroAnchor kZeroAnchor =
      std::is_same_v<T, __nv_bfloat16> ? ZeroAnchor{true, -64.0f, 32.0f}
                                       : ZeroAnchor{true, -6.0f, 8.0f};

  /// kZeroAnchor where the scores carry the scale (scale_log2 1, no offset), else none.
  template <typename T>
  __device__ __forceinline__ static ZeroAnchor zero_anchor(float scale_log2) {
    if (kOffsetLog2 != 0 || scale_log2 != 1.0f) return {};
    return kZeroAnchor<T>;
  }

  /// What a thread's share of an anchored row's block sum may reach before the max moves: 2^48
  /// in bf16 (O stays finite for values below 2^63 over 2^17 keys), 2^15 in f16 (P's range).
  template <typename T>
  static constexpr float kAnchoredSumLimit = std::is_same_v<T, __nv_bfloat16> ? 0x1p48f : 0x1p15f;

  /// 2^k for a whole k, exactly, at compile time.
  static constexpr float exact_exp2(int k) {
    float r = 1.0f;
    for (; k > 0; --k) r *= 2.0f;
    for (; k < 0; ++k) r *= 0.5f;
    return r;
  }

  /// The lower end of kZeroAnchor's window as a probability: a row's first block taken against a
  /// max of 0 without its max (update_and_pack's `first_at_zero`) must have a block sum of at
  /// least this times its keys, so that its largest probability is at least this, as the exact
  /// path's anchor requires.
  template <typename T>
  static constexpr float kAnchorFloor = exact_exp2(static_cast<int>(kZeroAnchor<T>.lowest_log2));

  /// The fast path: exponents x = s * scale_log2 - max left in `scores`, 2^x packed into `p`;
  /// kAnchored: every row of the warp anchored at 0 and scores that carry the scale, so x = s
  /// as it stands. Returns true when the warp is done (O's factors are all 1; `correction` is
  /// left holding the block sums, for no one to read); false when some thread's share of a row's
  /// block sum passed 2^8, or kAnchoredSumLimit (or is infinite), with `row_sum` untouched and
  /// `p` to be written again. kFirst (anchored only): the rows' first block, which the fast path
  /// takes against a max of 0 where every row's block sum is also at least kAnchorFloor times its
  /// keys (not NaN); the rows' max is then set to 0, and `scores` is left as it was either way,
  /// for the exact path to take it where the check failed.
  template <typename T, bool kAnchored, bool kFirst = false, int kNTiles>
  __device__ __forceinline__ bool exponents_against_stale_max(
      float (&scores)[kMTiles][kNTiles][4], uint32_t (&p)[kMTiles][kNTiles * 8 / kPvStepKeys<T>][4],
      float scale_log2, float (&correction)[kMTiles][2]) {
    // correction holds each row's block sum until the check: no other register to keep it in.
    bool over = false;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        [[maybe_unused]] const float max_scaled = row_max[m][half] * scale_log2 - kOffsetLog2;
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          float& x0 = scores[m][n][2 * half];
          float& x1 = scores[m][n][2 * half + 1];
          if constexpr (!kAnchored) {
            x0 = fmaf(x0, scale_log2, -max_scaled);
            x1 = fmaf(x1, scale_log2, -max_scaled);
          }
          const float p0 = ptx::exp2_approx(x0);
          const float p1 = ptx::exp2_approx(x1);
          sum += p0;
          sum += p1;
          put_probability_pair<T>(p[m], n, half, p0, p1);
        }
        correction[m][half] = sum;
        // Not for NaN (a NaN score stays NaN in O, as on the exact path); yes for infinity.
        over |= sum > (kAnchored ? kAnchoredSumLimit<T> : 256.0f);
        if constexpr (kFirst) {
          static_assert(kAnchored);
          // kAnchorFloor is exact for a whole lower end only.
          static_assert(kZeroAnchor<T>.lowest_log2 == static_cast<int>(kZeroAnchor<T>.lowest_log2));
          float row = sum + __shfl_xor_sync(0xffffffffu, sum, 1);
          row += __shfl_xor_sync(0xffffffffu, row, 2);
          over |= !(row >= kAnchorFloor<T> * (8 * kNTiles));
        }
      }
    }
    if (__any_sync(0xffffffffu, over)) return false;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        if constexpr (kFirst) row_max[m][half] = 0.0f;
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
