// Thin wrappers over the PTX instructions the sm80 kernels are built from: tensor-core MMA
// (mma.sync m16n8k16), shared-memory matrix loads (ldmatrix), asynchronous copies (cp.async),
// named barriers and the fast base-2 exponential. Each wrapper is one instruction; layouts are
// documented where used.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace flashvision::detail::ptx {

/// Shared-window address of a shared-memory pointer (what ldmatrix and cp.async take).
__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

/// D += A * B for one 16x8x16 tile: A row-major 16x16 (4 regs), B column-major 16x8 (2 regs),
/// fp32 accumulators (4 regs). T selects f16 or bf16 operands.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __half>, "mma_16816 supports __half and __nv_bfloat16");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

/// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, register i receives
/// matrix i with lane l holding (row l/4, columns 2(l%4), 2(l%4)+1).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// Two 8x8 b16 matrices (lanes 0..15 give the addresses); otherwise as ldmatrix_x4.
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(addr));
}

/// Transposed ldmatrix_x2.
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(addr));
}

/// As ldmatrix_x4 but transposed: lane l receives (rows 2(l%4), 2(l%4)+1, column l/4).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// 16-byte global->shared copy that bypasses L1; when `valid` is false nothing is read and the
/// destination is zero-filled (src must still be a mapped address, callers pass the tensor base).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

/// 4-byte global->shared copy through L1 (cp.async takes 4 bytes only with .ca); zero-fill and
/// `src` as in cp_async_16.
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

/// Asks L2 for the 128-byte line that holds `address` (global memory), without waiting for it.
__device__ __forceinline__ void prefetch_l2(const void* address) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(address));
}

/// Closes the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// threadIdx.x read by a volatile move: values computed from it where it is called are not
/// hoisted out of an enclosing loop by ptxas (which at the register limit then spills them).
__device__ __forceinline__ int thread_index_here() {
  unsigned tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  return static_cast<int>(tid);
}

/// a ^ b by a volatile instruction: the compiler neither hoists it out of an enclosing loop nor
/// merges it with an equal XOR elsewhere, so its result is live only up to its use (as a plain
/// XOR of loop invariants it became one more register held across the loop, and at 255 that
/// spilled).
__device__ __forceinline__ uint32_t xor_here(uint32_t a, uint32_t b) {
  uint32_t r;
  asm volatile("xor.b32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

/// Barrier among `threads` threads (a multiple of 32) on hardware barrier `id` (0 is
/// __syncthreads'); with named_barrier_arrive it orders shared-memory writes before the arrival
/// against reads after the sync.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Counts this thread towards hardware barrier `id` of `threads` threads without waiting.
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// 2^x with the hardware approximation (ex2.approx; -inf gives 0).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// Two floats rounded to a packed pair of T; `lo` lands in the low 16 bits (the lower column).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
}

/// The two floats of a packed pair of T (low half first).
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t bits) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&bits);
    return __bfloat1622float2(v);
  } else {
    __half2 v = *reinterpret_cast<__half2*>(&bits);
    return __half22float2(v);
  }
}

}  // namespace flashvision::detail::ptx
