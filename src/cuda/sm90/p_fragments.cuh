// P, the probabilities of a key block, as the register A operand of the Hopper forward's
// O += P V, for 16-bit and for e4m3 elements, and what the FP8 forward's element types are.
//
// A 16-bit k16 step's fragment is the S accumulator's layout of 16 columns, converted pairwise
// (acc_to_a_frags). An e4m3 k32 step's fragment holds, per thread and row, the four bytes of keys
// 4t..4t+3 and 16+4t..16+4t+3 of its 32 keys, while the accumulator gives the thread keys 2t, 2t+1
// of each 8-column tile. Rather than move bytes between lanes, the FP8 forward packs each thread's
// own probabilities (tiles 0 and 1 of a step into its first register of a row, 2 and 3 into its
// second) and reads V transposed with the same order of keys within each 32 (fp8_values.h), so
// that the GEMM pairs every probability with its own key's values.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail::sm90 {

/// Element type of O (and of the combine of split tiles) for inputs T: bf16 for e4m3, else T.
template <typename T>
struct FwdOutput {
  using type = T;
};
template <>
struct FwdOutput<__nv_fp8_e4m3> {
  using type = __nv_bfloat16;
};

/// log2 of the factor the FP8 forward scales probabilities by (the exact softmax's largest is
/// 2^this): e4m3 holds 2^-6 and above with 3 mantissa bits and subnormals down to 2^-9, so
/// unscaled probabilities of e^-5 (2^-7.2) would keep a bit or two. The fast path's check
/// (stale_max_softmax.cuh) keeps a thread's share of a row's block sum, and so every probability,
/// at or below 2^8, inside e4m3's 448; with 32 probabilities a thread and row in a 128-key block,
/// 2^3 leaves the fast path to blocks whose max moved.
inline constexpr int kFp8ProbabilityLog2 = 3;

/// Keys of one k-step of P V: 32 bytes of P a row.
template <typename T>
inline constexpr int kPvStepKeys = 32 / static_cast<int>(sizeof(T));

/// Writes the probabilities p0, p1 of a thread's columns 2t, 2t+1 of 8-column tile n in row half
/// `half` (rows g, g + 8) into P's A fragments `p` (one [4] per k-step).
template <typename T, int kSteps>
__device__ __forceinline__ void put_probability_pair(uint32_t (&p)[kSteps][4], int n, int half,
                                                     float p0, float p1) {
  if constexpr (sizeof(T) == 1) {
    const uint32_t pair = __nv_cvt_float2_to_fp8x2(make_float2(p0, p1), __NV_SATFINITE, __NV_E4M3);
    uint32_t& reg = p[n / 4][((n % 4) / 2) * 2 + half];
    reg = n % 2 == 0 ? pair : reg | (pair << 16);
  } else {
    p[n / 2][(n % 2) * 2 + half] = ptx::pack2<T>(p0, p1);
  }
}

/// Converts the probabilities left in accumulator tiles into P's A fragments.
template <typename T, int kMTiles, int kNTiles>
__device__ __forceinline__ void pack_probabilities(
    uint32_t (&p)[kMTiles][kNTiles * 8 / kPvStepKeys<T>][4],
    const float (&probabilities)[kMTiles][kNTiles][4]) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        put_probability_pair<T>(p[m], n, half, probabilities[m][n][2 * half],
                                probabilities[m][n][2 * half + 1]);
      }
    }
  }
}

}  // namespace flashvision::detail::sm90
