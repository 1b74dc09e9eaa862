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

/// A lane's ldmatrix addresses into a swizzled B operand (layout above) whose base is 128-byte
/// aligned, for tile pairs. Take `row` the lane's row address (128-byte aligned) and x = chunk ^ r
/// its chunk offset for pairs whose first chunk is 0 in its 128-byte line: a pair whose first chunk
/// is 2j sits at chunk (2j + chunk) ^ r = 2j ^ x (chunk is 0 or 1), at row + 16 (2j ^ x) =
/// (row + 16 x) ^ 32 j, plus an immediate. kLineRegisters holds the four values of j in four
/// registers; otherwise one register holds row + 16 x and each load XORs it, which the kernels
/// whose warps own 32 query rows need: with four registers they spilled at 255 (ptxas, sm_90).
/// `col_origin` (transposed B only: a warp's first column of the tile at b_base) must be a multiple
/// of the columns the GEMM reads, a power of two of at least 16: then its chunk bits below the
/// line and those of the pairs the GEMM walks are disjoint, and the origin is one more XOR.
template <bool kTrans, int kLd, bool kLineRegisters>
struct SwizzledB {
  static_assert(kLd % 64 == 0, "a swizzled row holds whole 128-byte lines");
  uint32_t base[kLineRegisters ? 4 : 1];

  __device__ __forceinline__ SwizzledB(uint32_t b_base, int lane, int col_origin = 0) {
    const int r = lane & 7, bit3 = (lane >> 3) & 1, bit4 = lane >> 4;
    // x4 matrices as in b_lane_offset: the lane's row within a 16-row step and whether it names
    // the first or the second 8-element chunk of the pair.
    const int row = r + (kTrans ? bit3 : bit4) * 8;
    const int chunk = kTrans ? bit4 : bit3;
    const int origin_line = (col_origin / 64) * 64, origin_chunk = (col_origin % 64) / 8;
    // Row (row0 + row) % 8 == r for any row0 that is a multiple of 16.
#pragma unroll
    for (int j = 0; j < (kLineRegisters ? 4 : 1); ++j) {
      base[j] = b_base + 2u * static_cast<uint32_t>(row * kLd + origin_line +
                                                    (((2 * j + chunk) ^ r ^ origin_chunk) * 8));
    }
  }

  /// The lane's address for pairs starting at column col0 (a multiple of 16) of the rows' first
  /// 128-byte line. With one register, xor_here keeps the XOR from becoming a register held
  /// across the key loop.
  __device__ __forceinline__ uint32_t line(int col0) const {
    const int j = (col0 / 16) % 4;
    if constexpr (kLineRegisters) {
      return base[j];
    } else {
      return j == 0 ? base[0] : ptx::xor_here(base[0], 32u * static_cast<uint32_t>(j));
    }
  }

  /// Address of the tile pair (n0, n0 + 8) at k0 from line(kTrans ? n0 : k0); n0 and k0 are
  /// multiples of 16.
  __device__ __forceinline__ static uint32_t pair(uint32_t line_addr, int n0, int k0) {
    const int row0 = kTrans ? k0 : n0, col0 = kTrans ? n0 : k0;
    return line_addr + 2u * static_cast<uint32_t>(row0 * kLd + (col0 / 64) * 64);
  }
};

/// mma_row_of_tiles with a swizzled B (kNTiles even: the GEMMs load tile pairs only).
template <typename T, int kMTiles, int kNTiles, bool kBTrans, int kLdb, bool kLineRegs>
__device__ __forceinline__ void mma_row_of_tiles_swizzled_b(
    float (&acc)[kMTiles][kNTiles][4], const uint32_t (&a)[kMTiles][4],
    const SwizzledB<kBTrans, kLdb, kLineRegs>& b_lane, int k0) {
  static_assert(kNTiles % 2 == 0, "tile pairs only");
  using B = SwizzledB<kBTrans, kLdb, kLineRegs>;
  // Not transposed, every pair of the k step starts at column k0: one XOR serves them all.
  const uint32_t k_line = kBTrans ? 0u : b_lane.line(k0);
#pragma unroll
  for (int n = 0; n < kNTiles; n += 2) {
    uint32_t b[4];
    if constexpr (kBTrans) {
      ptx::ldmatrix_x4_trans(b, B::pair(b_lane.line(n * 8), n * 8, k0));
    } else {
      ptx::ldmatrix_x4(b, B::pair(k_line, n * 8, k0));
    }
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
      ptx::mma_16816<T>(acc[m][n], a[m], b[0], b[1]);
      ptx::mma_16816<T>(acc[m][n + 1], a[m], b[2], b[3]);
    }
  }
}

/// warp_gemm_ss with A padded as there (not transposed) and B swizzled with rows kLdb apart,
/// addressed as SwizzledB<..., kLineRegs>; a transposed B's columns start at b_col_origin of the
/// tile at b_base (SwizzledB says which origins work).
template <typename T, int kMTiles, int kNTiles, int kK, bool kBTrans, int kLdb, bool kLineRegs>
__device__ __forceinline__ void warp_gemm_ss_swizzled_b(float (&acc)[kMTiles][kNTiles][4],
                                                        uint32_t a_base, int lda, uint32_t b_base,
                                                        int lane, int b_col_origin = 0) {
  static_assert(kK % 16 == 0, "k must be a multiple of 16");
  const int a_lane = a_lane_offset<false>(lane, lda);
  const SwizzledB<kBTrans, kLdb, kLineRegs> b_lane(b_base, lane, b_col_origin);
#pragma unroll
  for (int k0 = 0; k0 < kK; k0 += 16) {
    uint32_t a[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) load_a_frag<false>(a[m], a_base, a_lane, lda, m * 16, k0);
    mma_row_of_tiles_swizzled_b<T, kMTiles, kNTiles, kBTrans, kLdb, kLineRegs>(acc, a, b_lane, k0);
  }
}

/// warp_gemm_rs with B swizzled with rows kLdb apart, addressed as SwizzledB<..., kLineRegs>.
template <typename T, int kMTiles, int kNTiles, int kK, bool kBTrans, int kLdb, bool kLineRegs>
__device__ __forceinline__ void warp_gemm_rs_swizzled_b(float (&acc)[kMTiles][kNTiles][4],
                                                        const uint32_t (&a)[kMTiles][kK / 16][4],
                                                        uint32_t b_base, int lane) {
  const SwizzledB<kBTrans, kLdb, kLineRegs> b_lane(b_base, lane);
#pragma unroll
  for (int ks = 0; ks < kK / 16; ++ks) {
    uint32_t a_step[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a_step[m][i] = a[m][ks][i];
    }
    mma_row_of_tiles_swizzled_b<T, kMTiles, kNTiles, kBTrans, kLdb, kLineRegs>(acc, a_step, b_lane,
                                                                               ks * 16);
  }
}

}  // namespace flashvision::detail
