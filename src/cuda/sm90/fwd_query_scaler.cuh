// Q scaled in shared memory (FwdParams::q_prescaled). The fast path of the softmax takes
// 2^(s * scale_log2 - max) a score: an FFMA before each EX2. With Q multiplied by scale * log2(e)
// once per tile, the scores come out of S = Q K^T carrying the scale, and a row whose max is
// anchored at 0 (stale_max_softmax.cuh) needs nothing between the accumulator and the EX2. At the
// H200's power cap the forward's rate is its power over its energy per FLOP, and a score's
// instructions are most of what it spends beyond the GEMMs (docs/hopper.md, "The power limit").
//
// Each consumer warpgroup scales its own 64 rows of each tile's Q once it has landed, before its
// first GEMM: its 128 threads hold all of their chunks at once (D = 128: eight 16-byte chunks a
// thread), so the scaling waits out about one shared-memory round trip. The producer warpgroup's
// idle warps did it first (session 37), in their 24 registers a chunk at a time, and took about a
// microsecond a tile between the Q load and the first GEMM.
//
// Each product is rounded to T once: q * hi + (q * lo rounded), hi the factor rounded to T and lo
// the rest, in packed FMAs, so that the factor itself keeps about 16 bits; the rounding is then
// that of a framework that scales Q before the attention, relative 2^-9 (bf16) of each term of a
// score. That moves a row's LSE by up to about one bf16 step of its scores, so the host scales Q
// only where no LSE is asked for (tile_config.h's fwd_q_prescaled): O stays within bf16's error,
// and a backward's recomputation of P keeps the LSE it expects.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/common/ptx.cuh"
#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/ptx_sm90.cuh"

namespace flashvision::detail::sm90 {

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

/// 16-byte chunks a consumer thread scales in each panel of Q: a consumer's rows are 64 x kSwizzle
/// contiguous bytes of each panel, spread over its 128 threads.
template <typename Tr>
inline constexpr int kQueryChunksPerPanel = 64 * Tr::kSwizzle / 16 / 128;

/// Byte offset of a thread's chunk c (panel-major) from its first, in Tr's Q layout.
template <typename Tr>
__device__ __forceinline__ constexpr uint32_t chunk_offset(int c) {
  constexpr int kPerPanel = kQueryChunksPerPanel<Tr>;
  return (c / kPerPanel) * Tr::kBlockM * Tr::kSwizzle + (c % kPerPanel) * 16 * 128;
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

/// Scales consumer `consumer`'s 64 rows of the Q tile at `q` in place, `thread` 0 .. 127 of its
/// warpgroup, and makes them visible to the warpgroup's wgmma: each thread fences its stores
/// into the async proxy, then the warpgroup meets at its own named barrier (after the turn
/// barriers, TurnRound).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void scale_query_rows(uint32_t q, float q_scale, int consumer,
                                                 int thread) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  static_assert(!Tr::kFp8);
  constexpr int kChunks = Tr::kPanels * kQueryChunksPerPanel<Tr>;
  const uint32_t rows = q + consumer * 64 * Tr::kSwizzle + 16 * thread;
  const PackedFactor factor = packed_factor<T>(q_scale);
  uint4 v[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) v[c] = ld_shared_v4(rows + chunk_offset<Tr>(c));
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    st_shared_v4(rows + chunk_offset<Tr>(c), scaled_pair<T>(v[c].x, factor),
                 scaled_pair<T>(v[c].y, factor), scaled_pair<T>(v[c].z, factor),
                 scaled_pair<T>(v[c].w, factor));
  }
  // wgmma reads Q through the async proxy.
  fence_proxy_async_shared();
  named_barrier_sync(1 + Tr::kConsumers + consumer, 128);
}

}  // namespace flashvision::detail::sm90
