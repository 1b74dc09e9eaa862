// The mask of the forward kernels on accumulators in the mma tile layout (a thread holds rows
// lane/4 and lane/4 + 8 of each 16-row tile and columns 2(lane%4), 2(lane%4)+1 of each 8-column
// tile; wgmma's m64 accumulators have the same layout per warp).
#pragma once

#include <cmath>

namespace flashvision::detail {

/// Sets scores of keys a row may not see to -inf: keys past the sequence end and, under the causal
/// mask, keys right of the row's bottom-right-aligned diagonal.
template <int kMTiles, int kNTiles>
__device__ __forceinline__ void mask_scores(float (&s)[kMTiles][kNTiles][4], int first_row,
                                            int first_key, int q_len, int k_len, bool causal,
                                            int lane) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = first_row + m * 16 + lane / 4 + half * 8;
      const int limit = causal ? min(k_len, row + 1 + k_len - q_len) : k_len;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = first_key + n * 8 + 2 * (lane % 4) + e;
          if (key >= limit) s[m][n][2 * half + e] = -INFINITY;
        }
      }
    }
  }
}

}  // namespace flashvision::detail
