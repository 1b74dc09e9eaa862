// Warp-level GEMMs on mma.sync m16n8k16 with operands in shared memory (ldmatrix) or, for A, in
// registers. A warp computes acc[kMTiles][kNTiles] (16x8 fp32 tiles) += A (kMTiles*16 x kK) *
// B (kK x kNTiles*8). Shared operands are addressed by a leading dimension in elements:
//   A not transposed: element (m, k) at a[m * lda + k]   (stored [m][k], e.g. Q for Q K^T)
//   A transposed:     element (m, k) at a[k * lda + m]   (stored [k][m], e.g. dS^T for dS K)
//   B not transposed: element (k, n) at b[n * ldb + k]   (stored [n][k], e.g. K for Q K^T)
//   B transposed:     element (k, n) at b[k * ldb + n]   (stored [k][n], e.g. V for P V)
// Rows are padded by the caller so that eight consecutive rows hit eight different bank groups.
#pragma once

#include "cuda/common/ptx.cuh"

namespace flashvision::detail {

/// Per-lane element offset of the row address a lane gives to ldmatrix for an A tile.
template <bool kTrans>
__device__ __forceinline__ int a_lane_offset(int lane, int ld) {
  const int r = lane & 7, bit3 = (lane >> 3) & 1, bit4 = lane >> 4;
  // x4 matrices are (m0,k0) (m0+8,k0) (m0,k0+8) (m0+8,k0+8): the a0..a3 fragment order.
  return kTrans ? (r + bit4 * 8) * ld + bit3 * 8 : (r + bit3 * 8) * ld + bit4 * 8;
}

/// Per-lane element offset for a pair of B tiles (n0, n0+8); lanes 0..15 alone also serve x2.
template <bool kTrans>
__device__ __forceinline__ int b_lane_offset(int lane, int ld) {
  const int r = lane & 7, bit3 = (lane >> 3) & 1, bit4 = lane >> 4;
  // x4 matrices are (n0,k0) (n0,k0+8) (n0+8,k0) (n0+8,k0+8): b0,b1 of tile n0 then of n0+8.
  return kTrans ? (r + bit3 * 8) * ld + bit4 * 8 : (r + bit4 * 8) * ld + bit3 * 8;
}

/// A fragment (16x16 at m0, k0) from shared memory.
template <bool kTrans>
__device__ __forceinline__ void load_a_frag(uint32_t (&a)[4], uint32_t base, int lane_off, int ld,
                                            int m0, int k0) {
  const int off = kTrans ? k0 * ld + m0 : m0 * ld + k0;
  const uint32_t addr = base + 2u * static_cast<uint32_t>(off + lane_off);
  if constexpr (kTrans) {
    ptx::ldmatrix_x4_trans(a, addr);
  } else {
    ptx::ldmatrix_x4(a, addr);
  }
}

/// B fragments of the tile pair (n0, n0+8) at k0: b[0],b[1] for n0 and b[2],b[3] for n0+8.
template <bool kTrans>
__device__ __forceinline__ void load_b_pair(uint32_t (&b)[4], uint32_t base, int lane_off, int ld,
                                            int n0, int k0) {
  const int off = kTrans ? k0 * ld + n0 : n0 * ld + k0;
  const uint32_t addr = base + 2u * static_cast<uint32_t>(off + lane_off);
  if constexpr (kTrans) {
    ptx::ldmatrix_x4_trans(b, addr);
  } else {
    ptx::ldmatrix_x4(b, addr);
  }
}

/// B fragment of a single tile n0 at k0 (for an odd tile count).
template <bool kTrans>
__device__ __forceinline__ void load_b_single(uint32_t& b0, uint32_t& b1, uint32_t base,
                                              int lane_off, int ld, int n0, int k0) {
  const int off = kTrans ? k0 * ld + n0 : n0 * ld + k0;
  const uint32_t addr = base + 2u * static_cast<uint32_t>(off + lane_off);
  if constexpr (kTrans) {
    ptx::ldmatrix_x2_trans(b0, b1, addr);
  } else {
    ptx::ldmatrix_x2(b0, b1, addr);
  }
}

/// acc += B-side of one k16 step for every n tile, given the A fragments of that step.
template <typename T, int kMTiles, int kNTiles, bool kBTrans>
__device__ __forceinline__ void mma_row_of_tiles(float (&acc)[kMTiles][kNTiles][4],
                                                 const uint32_t (&a)[kMTiles][4], uint32_t b_base,
                                                 int b_lane, int ldb, int k0) {
#pragma unroll
  for (int n = 0; n + 1 < kNTiles; n += 2) {
    uint32_t b[4];
    load_b_pair<kBTrans>(b, b_base, b_lane, ldb, n * 8, k0);
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      ptx::mma_16816<T>(acc[m][n], a[m], b[0], b[1]);
      ptx::mma_16816<T>(acc[m][n + 1], a[m], b[2], b[3]);
    }
  }
  if constexpr (kNTiles % 2 == 1) {
    uint32_t b0, b1;
    load_b_single<kBTrans>(b0, b1, b_base, b_lane, ldb, (kNTiles - 1) * 8, k0);
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) ptx::mma_16816<T>(acc[m][kNTiles - 1], a[m], b0, b1);
  }
}

/// acc += A * B with both operands in shared memory (shared-window addresses of the warp's
/// A origin (m0 = 0, k0 = 0) and B origin (k0 = 0, n0 = 0)).
template <typename T, int kMTiles, int kNTiles, int kK, bool kATrans, bool kBTrans>
__device__ __forceinline__ void warp_gemm_ss(float (&acc)[kMTiles][kNTiles][4], uint32_t a_base,
                                             int lda, uint32_t b_base, int ldb, int lane) {
  static_assert(kK % 16 == 0, "k must be a multiple of 16");
  const int a_lane = a_lane_offset<kATrans>(lane, lda);
  const int b_lane = b_lane_offset<kBTrans>(lane, ldb);
#pragma unroll
  for (int k0 = 0; k0 < kK; k0 += 16) {
    uint32_t a[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) load_a_frag<kATrans>(a[m], a_base, a_lane, lda, m * 16, k0);
    mma_row_of_tiles<T, kMTiles, kNTiles, kBTrans>(acc, a, b_base, b_lane, ldb, k0);
  }
}

/// acc += A * B with A already in registers as fragments a[m][k16 step][4].
template <typename T, int kMTiles, int kNTiles, int kK, bool kBTrans>
__device__ __forceinline__ void warp_gemm_rs(float (&acc)[kMTiles][kNTiles][4],
                                             const uint32_t (&a)[kMTiles][kK / 16][4],
                                             uint32_t b_base, int ldb, int lane) {
  const int b_lane = b_lane_offset<kBTrans>(lane, ldb);
#pragma unroll
  for (int ks = 0; ks < kK / 16; ++ks) {
    uint32_t a_step[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a_step[m][i] = a[m][ks][i];
    }
    mma_row_of_tiles<T, kMTiles, kNTiles, kBTrans>(acc, a_step, b_base, b_lane, ldb, ks * 16);
  }
}

/// Converts fp32 accumulator tiles (kMTiles x kNTiles of 16x8, kNTiles even) into A fragments of
/// the next GEMM (k = the accumulator's columns): tiles 2j and 2j+1 form k16 step j.
template <typename T, int kMTiles, int kNTiles>
__device__ __forceinline__ void acc_to_a_frags(uint32_t (&a)[kMTiles][kNTiles / 2][4],
                                               const float (&acc)[kMTiles][kNTiles][4]) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int j = 0; j < kNTiles / 2; ++j) {
      a[m][j][0] = ptx::pack2<T>(acc[m][2 * j][0], acc[m][2 * j][1]);
      a[m][j][1] = ptx::pack2<T>(acc[m][2 * j][2], acc[m][2 * j][3]);
      a[m][j][2] = ptx::pack2<T>(acc[m][2 * j + 1][0], acc[m][2 * j + 1][1]);
      a[m][j][3] = ptx::pack2<T>(acc[m][2 * j + 1][2], acc[m][2 * j + 1][3]);
    }
  }
}

/// Zeroes accumulator tiles.
template <int kMTiles, int kNTiles>
__device__ __forceinline__ void clear(float (&acc)[kMTiles][kNTiles][4]) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[m][n][i] = 0.0f;
    }
  }
}

}  // namespace flashvision::detail
