// The mask of the forward kernels on accumulators in the mma tile layout (a thread holds rows
// lane/4 and lane/4 + 8 of each 16-row tile and columns 2(lane%4), 2(lane%4)+1 of each 8-column
// tile; wgmma's m64 accumulators have the same layout per warp).
#pragma once

#include <cmath>

namespace flashvision::detail {

/// Sets the scores of 8-column tile n that lie at or right of their row's limit to -inf.
template <int kMTiles, int kNTiles>
__device__ __forceinline__ void mask_column_tile(float (&s)[kMTiles][kNTiles][4], int n,
                                                 int first_row, int first_key, int q_len, int k_len,
                                                 bool causal, int lane) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = first_row + m * 16 + lane / 4 + half * 8;
      const int limit = causal ? min(k_len, row + 1 + k_len - q_len) : k_len;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = first_key + n * 8 + 2 * (lane % 4) + e;
        if (key >= limit) s[m][n][2 * half + e] = -INFINITY;
      }
    }
  }
}

/// Sets scores of keys a row may not see to -inf: keys past the sequence end and, under the causal
/// mask, keys right of the row's bottom-right-aligned diagonal. `first_row` is the warp's first
/// row. kSkipSeenTiles: no row below the first sees fewer keys, so the 8-key column tiles left of
/// its limit need no mask; the walk from the last tile stops at them, one warp-uniform test a tile
/// instead of a compare and select a score (a short sequence's block masks only its last few
/// tiles). Its branches cost registers, which some kernels do not have to spare (FwdTraits).
template <bool kSkipSeenTiles = false, int kMTiles, int kNTiles>
__device__ __forceinline__ void mask_scores(float (&s)[kMTiles][kNTiles][4], int first_row,
                                            int first_key, int q_len, int k_len, bool causal,
                                            int lane) {
  if constexpr (kSkipSeenTiles) {
    const int warp_limit = causal ? min(k_len, first_row + 1 + k_len - q_len) : k_len;
    // Tiles before this one hold keys every row of the warp sees (division toward zero: a limit
    // left of first_key masks every tile).
    const int first_masked_tile = (warp_limit - first_key) / 8;
#pragma unroll
    for (int n = kNTiles - 1; n >= 0; --n) {
      if (n < first_masked_tile) break;
      mask_column_tile(s, n, first_row, first_key, q_len, k_len, causal, lane);
    }
  } else {
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      mask_column_tile(s, n, first_row, first_key, q_len, k_len, causal, lane);
    }
  }
}

}  // namespace flashvision::detail
