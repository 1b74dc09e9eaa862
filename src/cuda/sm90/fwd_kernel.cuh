// sm90 forward kernel (FlashAttention-3 class): persistent CTAs of a producer and two or three
// consumer warpgroups walk a static schedule of (query block, head, sequence) tiles. The producer
// warpgroup gives up its registers (setmaxnreg) and one of its threads streams Q, K and V with TMA
// into shared memory guarded by mbarriers (fwd_producer.cuh); the consumer warpgroups, 64 query
// rows each, run wgmma and the online softmax (fwd_consumer.cuh).
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/sm90/fwd_consumer.cuh"
#include "cuda/sm90/fwd_producer.cuh"
#include "cuda/sm90/launch.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// kCrossTile: every unit is a whole tile of one key block, and the consumers pipeline across
/// tiles (FwdParams::cross_tile).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kCrossTile>
__global__ void __launch_bounds__(FwdTraits<kHeadDim, kBlockM, kBlockN>::kThreads, 1)
    fwd_kernel(const __grid_constant__ FwdParams p) {
  using Tr = FwdTraits<kHeadDim, kBlockM, kBlockN>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const SmemLayout<kHeadDim, kBlockM, kBlockN> smem{(raw + 1023u) & ~1023u};
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (threadIdx.x == 0) {
    // Every consumer warp releases a buffer once its wgmma have read it.
    for (int buffer = 0; buffer < Tr::kQBuffers; ++buffer) {
      mbarrier_init(smem.q_full(buffer), 1);
      mbarrier_init(smem.q_empty(buffer), Tr::kConsumers * 4);
    }
    for (int stage = 0; stage < Tr::kStages; ++stage) {
      mbarrier_init(smem.k_full(stage), 1);
      mbarrier_init(smem.v_full(stage), 1);
      mbarrier_init(smem.k_empty(stage), Tr::kConsumers * 4);
      mbarrier_init(smem.v_empty(stage), Tr::kConsumers * 4);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // 24 registers suffice to issue copies; the consumers take the rest (tile_config.h).
    set_max_registers<kProducerRegisters, false>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&p.tmap_q);
      prefetch_tensor_map(&p.tmap_k);
      prefetch_tensor_map(&p.tmap_v);
      produce<kHeadDim, kBlockM, kBlockN>(p, smem);
    }
  } else {
    set_max_registers<Tr::kConsumerRegisters, true>();
    consume<T, kHeadDim, kBlockM, kBlockN, kCrossTile>(p, smem, warpgroup - 1);
  }
}

template <DType kDType, int kHeadDim, int kBlockM, int kBlockN, bool kCrossTile>
void launch_fwd(const FwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  using Tr = FwdTraits<kHeadDim, kBlockM, kBlockN>;
  constexpr int kSmem = static_cast<int>(fwd_smem_bytes(kHeadDim, kBlockM, kBlockN));
  auto* kernel = &fwd_kernel<T, kHeadDim, kBlockM, kBlockN, kCrossTile>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm90 forward)");
  kernel<<<static_cast<unsigned>(params.grid_ctas), Tr::kThreads, kSmem,
           static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the sm90 forward kernel launch");
}

template <DType kDType, int kHeadDim, int kBlockM, int kBlockN>
void run_fwd(const FwdParams& params, void* stream) {
  if constexpr (fwd_cross_tile_compiled(kBlockM)) {
    if (params.cross_tile) {
      return launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, true>(params, stream);
    }
  }
  launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, false>(params, stream);
}

}  // namespace flashvision::detail::sm90
