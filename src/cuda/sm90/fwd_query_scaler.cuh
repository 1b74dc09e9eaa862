// Q scaled in shared memory by the producer warpgroup's other warps (FwdParams::q_prescaled).
// The fast path of the softmax takes 2^(s * scale_log2 - max) a score: an FFMA before each EX2.
// With Q multiplied by scale * log2(e) once per tile, the scores come out of S = Q K^T carrying
// the scale, and a row whose max is anchored at 0 (stale_max_softmax.cuh) needs nothing between
// the accumulator and the EX2. At the H200's power cap the forward's rate is its power over its
// energy per FLOP, and a score's instructions are most of what it spends beyond the GEMMs
// (docs/hopper.md, "The power limit").
//
// The producer thread loads each tile's Q as before; these warps walk the same tiles, wait for
// each Q (q_full), multiply
// every element by q_scale in place (the three warps a third of the buffer's 16-byte chunks each),
// and arrive on q_scaled, which the consumers wait for instead. Each product is rounded to T once:
// q * hi + (q * lo rounded), hi the factor rounded to T and lo the rest, in packed FMAs, so that
// the factor itself keeps about 16 bits; the rounding is then that of a framework that scales Q
// before the attention, relative 2^-9 (bf16) of each term of a score. That moves a row's LSE by up
// to about one bf16 step of its scores, so the host scales Q only where no LSE is asked for
// (tile_config.h's fwd_q_prescaled): O stays within bf16's error, and a backward's recomputation
// of P keeps the LSE it expects.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/common/ptx.cuh"
#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/ptx_sm90.cuh"

namespace flashvision::detail::sm90 {

/// Warps of the producer warpgroup that scale Q (all but the one that issues the loads).
inline constexpr int kQueryScalerWarps = 3;

/// q_scale as two packed pairs of T, hi (q_scale rounded) and lo (the rest, rounded).
struct PackedFactor {
  uint32_t hi, lo;
};

template <typename T>
__device__ __forceinline__ PackedFactor packed_factor(float scale) {
  const uint32_t hi = ptx::pack2<T>(scale, scale);
  const float rest = scale - ptx::unpack2<T>(hi).x;
  return {hi, ptx::pack2<T>(rest, rest)};
}

/// A packed pair of T times the factor, each product rounded once (fma of q, hi and q * lo).
template <typename T>
__device__ __forceinline__ uint32_t scaled_pair(uint32_t pair, PackedFactor factor) {
  uint32_t small, out;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(small) : "r"(pair), "r"(factor.lo));
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(out) : "r"(pair), "r"(factor.hi), "r"(small));
  } else {
    asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(small) : "r"(pair), "r"(factor.lo));
    asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(out) : "r"(pair), "r"(factor.hi), "r"(small));
  }
  return out;
}

/// Scales the 16-byte chunk at `addr` in place.
template <typename T>
__device__ __forceinline__ void scale_chunk(uint32_t addr, PackedFactor factor) {
  const uint4 v = ld_shared_v4(addr);
  st_shared_v4(addr, scaled_pair<T>(v.x, factor), scaled_pair<T>(v.y, factor),
               scaled_pair<T>(v.z, factor), scaled_pair<T>(v.w, factor));
}

/// The scaling warps' loop, `warp` 0 .. kQueryScalerWarps - 1: for every tile of the CTA's share
/// of the schedule whose Q the producer loads (it walks the same units), wait for Q, scale this
/// warp's share of its chunks and arrive on q_scaled.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void scale_queries(
    const FwdParams& p,
    const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>& smem, int warp) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  static_assert(!Tr::kFp8 && Tr::kQBytes % 16 == 0);
  constexpr int kChunks = static_cast<int>(Tr::kQBytes / 16);
  constexpr int kStride = kQueryScalerWarps * 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const PackedFactor factor = packed_factor<T>(p.q_scale);
  RingPosition<Tr::kQBuffers> q_ring;
  for (int unit = static_cast<int>(blockIdx.x); unit < p.num_units;
       unit += static_cast<int>(gridDim.x)) {
    const WorkTile w = locate_work<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(p, unit);
    if (!w.has_loads()) continue;
    const int buffer = q_ring.stage();
    mbarrier_wait(smem.q_full(buffer), q_ring.parity());
    const uint32_t q = smem.q(buffer);
    // Two chunks a step: half the loop's branches and index arithmetic, in the producer
    // warpgroup's 24 registers (each chunk's store waits for its load: the accesses are volatile).
#pragma unroll 1
    for (int chunk = warp * 32 + lane; chunk < kChunks; chunk += 2 * kStride) {
      scale_chunk<T>(q + 16 * chunk, factor);
      if (chunk + kStride < kChunks) scale_chunk<T>(q + 16 * (chunk + kStride), factor);
    }
    // wgmma reads Q through the async proxy.
    fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) mbarrier_arrive(smem.q_scaled(buffer));
    ++q_ring.index;
  }
}

}  // namespace flashvision::detail::sm90
