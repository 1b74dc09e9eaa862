// sm90 forward kernel (FlashAttention-3 class): persistent CTAs of a producer and one (half tiles),
// two or three consumer warpgroups walk a static schedule of (query block, head, sequence) tiles.
// The producer warpgroup gives up its registers (setmaxnreg) and one of its threads streams Q, K
// and V with TMA into shared memory guarded by mbarriers (fwd_producer.cuh), while its other three
// warps transpose V in FP8 (fwd_value_transposer.cuh); the consumer warpgroups, 64 query rows
// each, run wgmma and the online softmax (fwd_consumer.cuh). Where the CTAs of a cluster share K
// and V (kCtas > 1), each slot's empty barrier counts the consumer warps of every CTA of the
// cluster, and the CTAs pass a cluster barrier once their barriers are set up and again before
// they exit, so that no CTA writes into, or arrives on, one that has not started or has ended.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <string>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/grid_dependency.cuh"
#include "cuda/sm90/fwd_consumer.cuh"
#include "cuda/sm90/fwd_producer.cuh"
#include "cuda/sm90/fwd_value_transposer.cuh"
#include "cuda/sm90/launch.h"
#include "flashvision/error.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// kVInKernel: FP8 with V read as it lies and transposed by the producer warpgroup's other warps
/// (FwdParams::fp8_values_transposed 0). kCrossTile: every unit is a whole tile of one key block,
/// and the consumers pipeline across tiles (FwdParams::cross_tile). kCtas: the CTAs of a cluster
/// that share K and V (FwdParams::kv_multicast), or 1. kFirstKeys: the keys of a tile's first
/// key block that its consumers compute with (FwdParams::narrow_first), or kBlockN. kValueCols:
/// the columns of V and O a tile covers (FwdParams::value_cols).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          bool kCrossTile, int kCtas, int kFirstKeys>
__global__ void __launch_bounds__(
    FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>::kThreads, 1)
    fwd_kernel(const __grid_constant__ FwdParams p) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  // Every CTA is resident or done from here on: the combine of split tiles, queued after this
  // grid as its programmatic dependent (fwd_combine.cu), may start on the SMs this grid frees.
  ptx::launch_dependent_grids();
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols> smem{(raw + 1023u) &
                                                                               ~1023u};
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (threadIdx.x == 0) {
    // Every consumer warp releases a buffer once its wgmma have read it.
    for (int buffer = 0; buffer < Tr::kQBuffers; ++buffer) {
      mbarrier_init(smem.q_full(buffer), 1);
      mbarrier_init(smem.q_empty(buffer), Tr::kConsumers * 4);
    }
    for (int stage = 0; stage < Tr::kStages; ++stage) {
      mbarrier_init(smem.k_full(stage), 1);
      // The transposing warps fill the V stages (fwd_value_transposer.cuh), or TMA does.
      mbarrier_init(smem.v_full(stage), kVInKernel ? kValueTransposerWarps : 1);
      mbarrier_init(smem.k_empty(stage), Tr::kConsumers * 4 * kCtas);
      mbarrier_init(smem.v_empty(stage), Tr::kConsumers * 4 * kCtas);
    }
    if constexpr (kVInKernel) {
      for (int slot = 0; slot < Tr::kValueStagingSlots; ++slot) {
        mbarrier_init(smem.v_loaded_full(slot), 1);
        mbarrier_init(smem.v_loaded_empty(slot), kValueTransposerWarps);
        st_shared_u32(smem.loads_ended(slot), 0u);
      }
    }
    fence_barrier_init();
  }
  if constexpr (kCtas == 1) {
    __syncthreads();
  } else {
    cluster_sync();
  }

  if (warpgroup == 0) {
    // 24 registers suffice to issue copies and, one step at a time, to transpose V; the
    // consumers take the rest (tile_config.h).
    set_max_registers<kProducerRegisters, false>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&p.tmap_q);
      prefetch_tensor_map(&p.tmap_k);
      prefetch_tensor_map(&p.tmap_v);
      produce<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCtas>(p, smem);
    }
    if constexpr (kVInKernel) {
      if (threadIdx.x >= 32) transpose_values(smem, static_cast<int>(threadIdx.x) / 32 - 1);
    }
  } else {
    set_max_registers<Tr::kConsumerRegisters, true>();
    consume<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCrossTile, kCtas, kFirstKeys>(
        p, smem, warpgroup - 1);
  }
  if constexpr (kCtas > 1) cluster_sync();
}

/// A launch of `ctas` CTAs of kThreads threads and kSmem bytes of shared memory in clusters of
/// kCtas on `stream`, as cudaLaunchKernelEx and cudaOccupancyMaxActiveClusters take it. The config
/// points at the object's own cluster attribute, so the object is never copied.
template <int kCtas, int kThreads, int kSmem>
struct ClusterLaunch {
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config{};

  ClusterLaunch(int ctas, cudaStream_t stream) {
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kCtas;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(ctas), 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = kSmem;
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

/// Clusters of kCtas CTAs of `kernel` (with kSmem bytes of shared memory each) the current device
/// holds at once, asked of the runtime once per kernel and device: the CTAs are persistent, so the
/// grid must not need more. A GPC with an odd number of free SMs would leave one out; the H200
/// holds 66 clusters of two, all of its 132 SMs (bench/results/2026-12-01-s25, call 5).
template <auto kernel, int kCtas, int kThreads, int kSmem>
int resident_clusters() {
  constexpr int kDevices = 64;
  static std::array<std::atomic<int>, kDevices> known{};
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < kDevices && known[device].load(std::memory_order_relaxed) > 0) {
    return known[device].load(std::memory_order_relaxed);
  }
  const ClusterLaunch<kCtas, kThreads, kSmem> launch(kCtas, nullptr);
  int clusters = 0;
  cuda_check(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config),
             "cudaOccupancyMaxActiveClusters (sm90 forward)");
  if (clusters <= 0) {
    throw Error("sm90: the device cannot run clusters of " + std::to_string(kCtas) +
                " forward CTAs");
  }
  if (device < kDevices) known[device].store(clusters, std::memory_order_relaxed);
  return clusters;
}

template <DType kDType, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          bool kCrossTile, int kCtas = 1, int kFirstKeys = kBlockN>
void launch_fwd(const FwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  constexpr int kSmem = static_cast<int>(fwd_smem_bytes(
      kHeadDim, kBlockM, kBlockN, Tr::kElementBytes, Tr::kValueStagingSlots, kValueCols));
  constexpr auto kernel = &fwd_kernel<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols,
                                      kCrossTile, kCtas, kFirstKeys>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm90 forward)");
  if constexpr (kCtas == 1) {
    kernel<<<static_cast<unsigned>(params.grid_ctas), Tr::kThreads, kSmem,
             static_cast<cudaStream_t>(stream)>>>(params);
  } else {
    // Whole clusters, no more than the device holds at once: the CTAs are persistent, and a
    // cluster's CTAs take adjacent units (an even count of them, fwd_kv_multicast).
    const int clusters =
        std::min(params.grid_ctas / kCtas, resident_clusters<kernel, kCtas, Tr::kThreads, kSmem>());
    const ClusterLaunch<kCtas, Tr::kThreads, kSmem> launch(clusters * kCtas,
                                                           static_cast<cudaStream_t>(stream));
    cuda_check(cudaLaunchKernelEx(&launch.config, kernel, params),
               "the sm90 forward cluster launch");
  }
  cuda_check(cudaGetLastError(), "the sm90 forward kernel launch");
}

/// The kernels of a tile with V as it lies (kVInKernel: FP8 only, transposed in the kernel) or,
/// in FP8, transposed by a pass before the kernel, covering all of V's columns up to 256.
template <DType kDType, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel>
void run_fwd_values(const FwdParams& params, void* stream) {
  constexpr int kValueCols = value_columns(kHeadDim);
  // FP8 has no shared-load path.
  if constexpr (kDType != DType::f8e4m3 && fwd_multicast_compiled(kHeadDim, kBlockM, kBlockN)) {
    if (params.kv_multicast) {
      return launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, false,
                        kKvMulticastCtas>(params, stream);
    }
  }
  if constexpr (fwd_cross_tile_compiled(kHeadDim, kBlockM, kBlockN)) {
    if (params.cross_tile) {
      return launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, true>(params,
                                                                                          stream);
    }
  }
  if constexpr (constexpr int kFirstKeys = narrow_first_keys(kHeadDim, kBlockM, kBlockN);
                kDType != DType::f8e4m3 && kFirstKeys != 0) {
    if (params.narrow_first) {
      return launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, false, 1,
                        kFirstKeys>(params, stream);
    }
  }
  launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, false>(params, stream);
}

template <DType kDType, int kHeadDim, int kBlockM, int kBlockN>
void run_fwd(const FwdParams& params, void* stream) {
  if constexpr (kDType == DType::f8e4m3) {
    if (!params.fp8_values_transposed) {
      return run_fwd_values<kDType, kHeadDim, kBlockM, kBlockN, true>(params, stream);
    }
  }
  // A sliced tile (a half tile) has only the plain kernel: no clusters, no cross-tile pipeline,
  // no narrow first block.
  if constexpr (constexpr int kSliced = sliced_value_columns(kHeadDim, kBlockM);
                kDType != DType::f8e4m3 && kSliced != 0) {
    if (params.value_cols == kSliced) {
      return launch_fwd<kDType, kHeadDim, kBlockM, kBlockN, false, kSliced, false>(params, stream);
    }
  }
  run_fwd_values<kDType, kHeadDim, kBlockM, kBlockN, false>(params, stream);
}

}  // namespace flashvision::detail::sm90
