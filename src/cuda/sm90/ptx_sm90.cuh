// Wrappers over the Hopper (sm_90a) instructions the sm90 kernels are built from: mbarriers, TMA
// tensor loads, wgmma bookkeeping (fence, commit, wait), shared-memory matrix descriptors,
// stmatrix, setmaxnreg and named barriers. The wgmma instructions themselves are in wgmma_ops.cuh
// (generated). Facts and sources: shared/HOPPER.md.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail::sm90 {

// ---- mbarrier --------------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}

/// Makes barrier initialization visible to the async proxy (TMA) and the other threads.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival that also announces `bytes` of TMA transactions the phase must wait for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// Blocks until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so
/// waiting on parity 1 returns at once: producers start there to find every slot free.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

/// One arrival on `bar` once every cp.async this thread issued before has landed; the barrier's
/// expected count must include it (noinc).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/// `x` (a 32-bit integer), through an empty volatile asm the compiler cannot see through, so that
/// what derives from it is computed where it is used rather than hoisted out of a loop, where it
/// would hold registers through the main loop (and spill).
template <typename Int>
__device__ __forceinline__ Int opaque(Int x) {
  static_assert(sizeof(Int) == 4, "opaque() passes one 32-bit register");
  asm volatile("" : "+r"(x));
  return x;
}

// ---- TMA -------------------------------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/// Loads the box at coordinates (c0 innermost .. c3) of a rank-4 tensor map into shared memory at
/// `dst`, completing `bytes` of transactions on `bar`. Out-of-range elements are zero-filled.
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, int c3, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

/// tma_load_4d for a rank-5 tensor map (coordinates c0 innermost .. c4).
__device__ __forceinline__ void tma_load_5d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, int c3, int c4, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
      : "memory");
}

/// tma_load_4d into the same shared-memory offset of every CTA of the cluster in `cta_mask`,
/// completing the box's bytes on the barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_4d_multicast(uint32_t dst, const CUtensorMap* map, int c0,
                                                      int c1, int c2, int c3, uint32_t bar,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar),
      "h"(cta_mask)
      : "memory");
}

// ---- clusters --------------------------------------------------------------------------------

/// This CTA's rank in its cluster. Volatile, so that it is read where it is used rather than held
/// in a register through a loop (the producer has 24).
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

/// The shared::cluster address of the variable at shared::cta address `addr` in the CTA of rank
/// `rank` of this cluster.
__device__ __forceinline__ uint32_t cluster_address(uint32_t addr, uint32_t rank) {
  uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(addr), "r"(rank));
  return mapped;
}

/// One arrival on the mbarrier at shared::cluster address `bar` (this CTA's or another's). The
/// default semantics, release at CTA scope: a cluster-scope release put a MEMBAR.ALL.GPU in front
/// of every arrival, and what it orders here (wgmma reads of a slot before the slot's next TMA
/// write) needs no more.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// A barrier of every thread of every CTA of the cluster (release, then acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

// ---- wgmma bookkeeping -----------------------------------------------------------------------

/// Orders register writes (accumulators, A fragments) before the wgmma that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most kPending committed wgmma groups of this warpgroup are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Keeps the compiler from moving reads or writes of accumulator registers across a wgmma
/// wait: the asynchronous instruction writes them behind its back.
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&regs)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(regs[i])::"memory");
}

/// smem_descriptor's swizzle mode of a swizzle `bytes` wide (128, 64 or 32).
constexpr uint32_t descriptor_swizzle_mode(int bytes) {
  return bytes == 128 ? 1 : (bytes == 64 ? 2 : 3);
}

/// Shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2): start address, leading and stride
/// byte offsets (all stored >> 4) and the swizzle mode (1 = 128 B, 2 = 64 B, 3 = 32 B).
__device__ __forceinline__ uint64_t smem_descriptor(uint32_t addr, uint32_t leading_bytes,
                                                    uint32_t stride_bytes, uint32_t swizzle_mode) {
  return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) |
         (static_cast<uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<uint64_t>(stride_bytes >> 4) << 32) |
         (static_cast<uint64_t>(swizzle_mode) << 62);
}

/// `desc` with its start address moved by `bytes` (a multiple of 16). The address field holds
/// addr >> 4 in the low 14 bits and shared-memory addresses stay below 2^18, so the move never
/// carries out of the field and only the low word changes: one add per wgmma operand where
/// rebuilding the descriptor from an address costs a mask, a shift and an or or two.
__device__ __forceinline__ uint64_t advance_descriptor(uint64_t desc, uint32_t bytes) {
  const uint32_t lo = static_cast<uint32_t>(desc) + (bytes >> 4);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

// ---- epilogue staging ------------------------------------------------------------------------

/// Stores four 8x8 matrices of 16-bit elements from mma accumulator fragments: register r of a
/// lane holds row lane / 4, columns 2 (lane % 4) and +1 of matrix r, and lane i gives the
/// shared address of row i % 8 of matrix i / 8 (16 bytes each).
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/// stmatrix_x4 with each 8x8 matrix transposed on the way: lane i then gives the address of row
/// i % 8 of the stored (transposed) matrix i / 8, that is of column i % 8 of the fragment's matrix.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                  uint32_t r2, uint32_t r3) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
      "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}

/// Adds the box at shared address `src` element by element (each add atomic) into the global
/// tensor of a rank-3 tiled map at coordinates (c0 innermost, c1, c2); elements outside the
/// tensor are left out. One bulk group per bulk_commit_group; `src` may be written again once
/// bulk_wait_group_read has returned in the issuing thread.
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, uint32_t src, int c0,
                                                  int c1, int c2) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], "
      "[%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's bulk groups still read their shared sources.
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void st_shared_v2(uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

/// Makes this thread's ordinary shared-memory writes visible to the async proxy (wgmma and TMA
/// reading shared memory); a barrier after it orders them for the other threads.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t x, uint32_t y, uint32_t z,
                                             uint32_t w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z),
               "r"(w)
               : "memory");
}

// ---- warp roles --------------------------------------------------------------------------------

/// Lowers (kInc false) or raises this warpgroup's register budget; all its warps execute it.
template <int kRegisters, bool kInc>
__device__ __forceinline__ void set_max_registers() {
  if constexpr (kInc) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
  } else {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
  }
}

// Named barriers: the sm80 kernels use them too (cuda/common/ptx.cuh).
using ptx::named_barrier_arrive;
using ptx::named_barrier_sync;

}  // namespace flashvision::detail::sm90
