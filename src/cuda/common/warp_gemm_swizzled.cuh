// Warp GEMMs of warp_gemm.cuh whose B operand lies in shared memory unpadded and XOR-swizzled:
// rows kLd elements apart (kLd a multiple of 64) with the 16-byte chunk c of row r stored at chunk
// c ^ (r % 8). ldmatrix's eight row addresses then still fall in eight different bank groups, and
// every 128-byte piece of a row stays inside one aligned 128-byte line, which is what cp.async
// needs to write a row's eight chunks in one shared-memory wavefront (the padded rows of
// warp_gemm.cuh shift each row by 16 bytes, and Nsight Compute counted 2.1x the ideal wavefronts
// for the sm80 forward's K/V copies into them on the H200).
#pragma once

#include "cuda/common/ptx.cuh"
#include "cuda/common/warp_gemm.cuh"

namespace flashvision::detail {

/// A lane's ldmatrix addresses into a swizzled B operand (layout above), for tile pairs: one
/// address per value of (chunk index % 8) / 2 of the pair's first chunk, so that every (n0, k0)
/// the GEMMs ask for is one of them plus an immediate.
template <bool kTrans, int kLd>
struct SwizzledB {
  static_assert(kLd % 64 == 0, "a swizzled row holds whole 128-byte lines");
  uint32_t base[4];

  __device__ __forceinline__ SwizzledB(uint32_t b_base, int lane) {
    const int r = lane & 7, bit3 = (lane >> 3) & 1, bit4 = lane >> 4;
    // x4 matrices as in b_lane_offset: the lane's row within a 16-row step and whether it names
    // the first or the second 8-element chunk of the pair.
    const int row = r + (kTrans ? bit3 : bit4) * 8;
    const int chunk = kTrans ? bit4 : bit3;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      // Row (row0 + row) % 8 == r for any row0 that is a multiple of 16.
      base[j] = b_base + 2u * static_cast<uint32_t>(row * kLd + (((2 * j + chunk) ^ r) * 8));
    }
  }

  /// Address of the tile pair (n0, n0 + 8) at k0; n0 and k0 are multiples of 16.
  __device__ __forceinline__ uint32_t pair(int n0, int k0) const {
    const int row0 = kTrans ? k0 : n0, col0 = kTrans ? n0 : k0;
    return base[(col0 / 16) % 4] + 2u * static_cast<uint32_t>(row0 * kLd + (col0 / 64) * 64);
  }
};

/// mma_row_of_tiles with a swizzled B (kNTiles even: the GEMMs load tile pairs only).
template <typename T, int kMTiles, int kNTiles, bool kBTrans, int kLdb>
__device__ __forceinline__ void mma_row_of_tiles_swizzled_b(float (&acc)[kMTiles][kNTiles][4],
                                                            const uint32_t (&a)[kMTiles][4],
                                                            const SwizzledB<kBTrans, kLdb>& b_lane,
                                                            int k0) {
  static_assert(kNTiles % 2 == 0, "tile pairs only");
#pragma unroll
  for (int n = 0; n < kNTiles; n += 2) {
    uint32_t b[4];
    if constexpr (kBTrans) {
      ptx::ldmatrix_x4_trans(b, b_lane.pair(n * 8, k0));
    } else {
      ptx::ldmatrix_x4(b, b_lane.pair(n * 8, k0));
    }
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      ptx::mma_16816<T>(acc[m][n], a[m], b[0], b[1]);
      ptx::mma_16816<T>(acc[m][n + 1], a[m], b[2], b[3]);
    }
  }
}

/// warp_gemm_ss with A padded as there (not transposed) and B swizzled with rows kLdb apart.
template <typename T, int kMTiles, int kNTiles, int kK, bool kBTrans, int kLdb>
__device__ __forceinline__ void warp_gemm_ss_swizzled_b(float (&acc)[kMTiles][kNTiles][4],
                                                        uint32_t a_base, int lda, uint32_t b_base,
                                                        int lane) {
  static_assert(kK % 16 == 0, "k must be a multiple of 16");
  const int a_lane = a_lane_offset<false>(lane, lda);
  const SwizzledB<kBTrans, kLdb> b_lane(b_base, lane);
#pragma unroll
  for (int k0 = 0; k0 < kK; k0 += 16) {
    uint32_t a[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) load_a_frag<false>(a[m], a_base, a_lane, lda, m * 16, k0);
    mma_row_of_tiles_swizzled_b<T, kMTiles, kNTiles, kBTrans, kLdb>(acc, a, b_lane, k0);
  }
}

/// warp_gemm_rs with B swizzled with rows kLdb apart.
template <typename T, int kMTiles, int kNTiles, int kK, bool kBTrans, int kLdb>
__device__ __forceinline__ void warp_gemm_rs_swizzled_b(float (&acc)[kMTiles][kNTiles][4],
                                                        const uint32_t (&a)[kMTiles][kK / 16][4],
                                                        uint32_t b_base, int lane) {
  const SwizzledB<kBTrans, kLdb> b_lane(b_base, lane);
#pragma unroll
  for (int ks = 0; ks < kK / 16; ++ks) {
    uint32_t a_step[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a_step[m][i] = a[m][ks][i];
    }
    mma_row_of_tiles_swizzled_b<T, kMTiles, kNTiles, kBTrans, kLdb>(acc, a_step, b_lane, ks * 16);
  }
}

}  // namespace flashvision::detail
