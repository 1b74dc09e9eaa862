// The split units of the sm80 forward (params.h, common/fwd_split.h): which tile and key blocks a
// CTA computes, and how a unit that holds only a key range of its tile writes its partial result.
#pragma once

#include <cstdint>

#include "cuda/sm80/params.h"

namespace flashvision::detail::sm80 {

/// The tile of this CTA: blockIdx.x below split_tile0, else the tile whose key range it computes.
__device__ __forceinline__ int fwd_cta_tile(const FwdParams& p) {
  const int cta = static_cast<int>(blockIdx.x);
  return cta < p.split_tile0 ? cta : p.split_tile0 + (cta - p.split_tile0) / p.split_parts;
}

/// The partial result this CTA writes (its unit's index), or -1 for a whole tile. Read from
/// blockIdx.x where it is needed rather than kept in a register through the key loop.
__device__ __forceinline__ int fwd_cta_partial(const FwdParams& p) {
  const int cta = static_cast<int>(blockIdx.x);
  return cta < p.split_tile0 ? -1 : cta - p.split_tile0;
}

/// The key blocks [begin, end) this CTA walks of its tile's `n_blocks`: all of them, or its part's
/// range (empty where the part starts past the tile's keys).
struct KeyBlockRange {
  int begin;
  int end;
};

__device__ __forceinline__ KeyBlockRange fwd_cta_key_blocks(const FwdParams& p, int n_blocks) {
  const int partial = fwd_cta_partial(p);
  if (partial < 0) return {0, n_blocks};
  const int begin = (partial % p.split_parts) * p.split_blocks;
  return {begin, min(n_blocks, begin + p.split_blocks)};
}

/// Writes a warp's rows of a split unit's result (rows from `warp_row0` of the tile, those below
/// `rows_valid`): O normalized by the unit's own sum in fp32, all kHeadDim columns (split_cols is
/// the bucket), and the LSE over the unit's keys.
template <int kMTiles, int kHeadDim, int kBlockM>
__device__ __forceinline__ void store_partial(const FwdParams& p, int partial, int warp_row0,
                                              int rows_valid,
                                              const float (&acc_o)[kMTiles][kHeadDim / 8][4],
                                              const float (&inv_sum)[kMTiles][2],
                                              const float (&lse)[kMTiles][2], int lane) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int tile_row = warp_row0 + m * 16 + lane / 4 + half * 8;
      if (tile_row >= rows_valid) continue;
      const int64_t row = static_cast<int64_t>(partial) * kBlockM + tile_row;
      float* out_row = p.split_o + row * kHeadDim;
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        *reinterpret_cast<float2*>(out_row + d * 8 + 2 * (lane % 4)) =
            make_float2(acc_o[m][d][2 * half] * inv_sum[m][half],
                        acc_o[m][d][2 * half + 1] * inv_sum[m][half]);
      }
      if (lane % 4 == 0) p.split_lse[row] = lse[m][half];
    }
  }
}

}  // namespace flashvision::detail::sm80
