// Online softmax over the rows a thread holds in mma accumulators: for each of its kMTiles 16-row
// tiles a thread owns rows g and g+8 (g = lane / 4) and, of every 8-column tile, columns 2t and
// 2t+1 (t = lane % 4); the four lanes of a quad together hold a whole row.
#pragma once

#include <cmath>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail {

/// With a lazy max (kLazyMax), how far (in log2 units, after the scale) a block's scores may pass
/// the max a row's exponents are taken against before that max moves. The softmax is the same
/// function against any max; a stale one only bounds the probabilities by 2^8 instead of 1, far
/// inside fp32 (O, the sums) and bf16/f16 (P). Moving the max only then leaves O alone on most key
/// blocks after a row's first few, and rescale() skips a warp whose rows all kept theirs: at
/// D = 256 the rescale is 128 multiplies a thread per block next to about 40 scores' softmax.
inline constexpr float kMaxSlackLog2 = 8.0f;

/// Where a row's max may be taken as 0 instead of its value: the max a row's exponents are taken
/// against is free (kMaxSlackLog2), and one of 0 lets a kernel whose scores already carry the
/// scale take 2^s without subtracting anything (the Hopper forward with Q scaled beforehand,
/// stale_max_softmax.cuh). Anchored where the new max, in log2 units after the scale, lies in
/// [lowest_log2, highest_log2]: a window P's format and O's fp32 keep exact. None by default
/// (`active` false folds every test away).
struct ZeroAnchor {
  bool active = false;
  float lowest_log2 = 0.0f;
  float highest_log2 = 0.0f;
  __device__ __forceinline__ bool holds(float max_scaled) const {
    return active && max_scaled >= lowest_log2 && max_scaled <= highest_log2;
  }
};

/// Running max and sum of the rows of one warp's accumulators. Scores stay raw (unscaled); the
/// softmax scale is folded into the exponent as scale * log2(e), so one FFMA + EX2 per element.
/// kLazyMax: the max moves only past kMaxSlackLog2 and rescale() votes to skip (pays where O's
/// rows are long: each kernel's traits choose, from measurements); otherwise the max follows
/// every block and O is always rescaled. kOffsetLog2: probabilities are 2^kOffsetLog2 times
/// exp(scale * (s - max)), for storage formats whose precision falls off below 1 (the Hopper FP8
/// forward's e4m3 P); the sums carry the factor too, so O's normalization cancels it and
/// finalize() takes it out of the LSE. The lazy slack would let it pass e4m3's range.
/// kShortChains: update_scores takes a block's exponents before its exponentials and its max and
/// sum in two interleaved chains each, for the same instructions. In the Hopper forward, which
/// takes a row's first key block here, ViT-B/16 (one block a tile) ran 3.6 % faster on the H200,
/// ViT-L/14 and ViT-H/14 1 %, the rest level (bench/results/2026-12-02-s31, call 3); its half
/// tiles and FP8 keep the plain form (FwdTraits::kShortSoftmaxChains), as does the sm80 forward.
/// The same form in the later blocks (stale_max_softmax.cuh) cost those kernels registers and
/// 2-3 % on long cases (call 2).
template <int kMTiles, bool kLazyMax, int kOffsetLog2 = 0, bool kShortChains = false>
struct OnlineSoftmax {
  static_assert(!kLazyMax || kOffsetLog2 == 0, "a lazy max bounds probabilities by 2^8 only");

  /// the max of raw scores the row's exponents are taken against: within kMaxSlackLog2 (scaled)
  /// of the row's running max; -inf until a row sees a key
  float row_max[kMTiles][2];
  float row_sum[kMTiles][2];  ///< this thread's part of the running sum (reduced in finalize)

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      row_max[m][0] = row_max[m][1] = -INFINITY;
      row_sum[m][0] = row_sum[m][1] = 0.0f;
    }
  }

  /// Folds a block of scores in: updates the max, rescales `out` and the sum, and turns `scores`
  /// into unnormalized probabilities exp(scale * (s - max)).
  template <int kNTiles, int kDTiles>
  __device__ __forceinline__ void update(float (&scores)[kMTiles][kNTiles][4],
                                         float (&out)[kMTiles][kDTiles][4], float scale_log2) {
    float correction[kMTiles][2];
    update_scores(scores, scale_log2, correction);
    rescale(out, correction);
  }

  /// The part of update() that leaves `out` alone (a kernel whose P V is still in flight rescales
  /// it later): returns each row's factor exp(scale * (old max - new max)) in `correction`. A row
  /// whose new max lies in `anchor`'s window takes 0 as its max instead.
  template <int kNTiles>
  __device__ __forceinline__ void update_scores(float (&scores)[kMTiles][kNTiles][4],
                                                float scale_log2, float (&correction)[kMTiles][2],
                                                ZeroAnchor anchor = {}) {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float block_max = row_max_of_block(scores[m], half, row_max[m][half]);
        block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 1));
        block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 2));
        // A row that has seen only masked keys keeps max -inf; subtracting 0 instead keeps every
        // exponent -inf (probability 0) rather than NaN.
        float max_scaled;
        if constexpr (kLazyMax) {
          // The max moves only past the slack (a row's first key always moves it from -inf).
          const float old_scaled = row_max[m][half] * scale_log2;
          const bool moves = block_max * scale_log2 > old_scaled + kMaxSlackLog2;
          if (moves) row_max[m][half] = anchor.holds(block_max * scale_log2) ? 0.0f : block_max;
          max_scaled = row_max[m][half] == -INFINITY ? 0.0f : row_max[m][half] * scale_log2;
          correction[m][half] = moves ? ptx::exp2_approx(old_scaled - max_scaled) : 1.0f;
        } else {
          if (anchor.holds(block_max * scale_log2)) block_max = 0.0f;
          max_scaled = block_max == -INFINITY ? 0.0f : block_max * scale_log2 - kOffsetLog2;
          correction[m][half] =
              ptx::exp2_approx(row_max[m][half] * scale_log2 - kOffsetLog2 - max_scaled);
          row_max[m][half] = block_max;
        }
        row_sum[m][half] = exponentials_of_block(scores[m], half, scale_log2, max_scaled,
                                                 row_sum[m][half] * correction[m][half]);
      }
    }
  }

  /// Multiplies each row of `out` by its correction factor. With a lazy max, a warp whose factors
  /// are all 1 (no row's max moved) skips it, on one vote: all 32 lanes of the warp must call it.
  template <int kDTiles>
  __device__ __forceinline__ static void rescale(float (&out)[kMTiles][kDTiles][4],
                                                 const float (&correction)[kMTiles][2]) {
    if constexpr (kLazyMax) {
      bool moved = false;
#pragma unroll
      for (int m = 0; m < kMTiles; ++m) {
        moved |= correction[m][0] != 1.0f || correction[m][1] != 1.0f;
      }
      if (!__any_sync(0xffffffffu, moved)) return;
    }
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int d = 0; d < kDTiles; ++d) {
        out[m][d][0] *= correction[m][0];
        out[m][d][1] *= correction[m][0];
        out[m][d][2] *= correction[m][1];
        out[m][d][3] *= correction[m][1];
      }
    }
  }

  /// Reduces the sums over the quad and returns, per row, 1/sum (0 for a row that saw no key) in
  /// `inv_sum` and the natural-log LSE (-inf for such a row) in `lse`. The reciprocal and the
  /// logarithm are the intrinsics __fdividef and __logf (the CUDA guide: 2 ulp for divisors in
  /// [2^-126, 2^126]; 3 ulp, or 2^-21.41 absolute in [0.5, 2]): a row's sum holds the probability
  /// 1 of the key that set its max, scaled by at most the few powers of two the softmax applies,
  /// so it lies far inside those ranges, while IEEE division and logf cost the epilogue of every
  /// tile about 100 instructions with branches a row pair (ViT-L/14's SASS).
  __device__ __forceinline__ void finalize(float scale, float (&inv_sum)[kMTiles][2],
                                           float (&lse)[kMTiles][2]) {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float sum = row_sum[m][half];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const bool empty = !(sum > 0.0f);
        inv_sum[m][half] = empty ? 0.0f : __fdividef(1.0f, sum);
        lse[m][half] = empty ? -INFINITY
                             : row_max[m][half] * scale + __logf(sum) -
                                   static_cast<float>(kOffsetLog2) * 0.69314718f;
      }
    }
  }

 private:
  /// The largest of `start` and the scores of row half `half` of a 16-row tile's block (this
  /// thread's columns); with kShortChains in two interleaved chains of FMNMX.
  template <int kNTiles>
  __device__ __forceinline__ static float row_max_of_block(const float (&tile)[kNTiles][4],
                                                           int half, float start) {
    float part[2] = {start, start};
    constexpr int kParts = kShortChains ? 2 : 1;
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      part[n % kParts] = fmaxf(part[n % kParts], fmaxf(tile[n][2 * half], tile[n][2 * half + 1]));
    }
    return kShortChains ? fmaxf(part[0], part[1]) : part[0];
  }

  /// Turns row half `half` of a 16-row tile's block into probabilities 2^(s * scale_log2 -
  /// max_scaled) and returns `start` plus their sum (this thread's columns). kShortChains: every
  /// exponent before the exponentials, so that no EX2 waits on the FFMA that makes its input, and
  /// the sum in two interleaved chains of adds.
  template <int kNTiles>
  __device__ __forceinline__ static float exponentials_of_block(float (&tile)[kNTiles][4], int half,
                                                                float scale_log2, float max_scaled,
                                                                float start) {
    if constexpr (kShortChains) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          tile[n][2 * half + e] = fmaf(tile[n][2 * half + e], scale_log2, -max_scaled);
        }
      }
      float part[2] = {0.0f, 0.0f};
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          tile[n][2 * half + e] = ptx::exp2_approx(tile[n][2 * half + e]);
        }
        part[n % 2] += tile[n][2 * half] + tile[n][2 * half + 1];
      }
      return start + (part[0] + part[1]);
    } else {
      float sum = start;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = tile[n][2 * half + e];
          x = ptx::exp2_approx(fmaf(x, scale_log2, -max_scaled));
          sum += x;
        }
      }
      return sum;
    }
  }
};

}  // namespace flashvision::detail
