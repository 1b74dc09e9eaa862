// Kernels launched as programmatic dependents (PTX griddepcontrol,
// cudaLaunchAttributeProgrammaticStreamSerialization): compute capability 9.0 and up. The backend
// says where (cuda_backend.cpp's programmatic_dependents, from the device's cached attributes).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/common/cuda_check.h"

namespace flashvision::detail {

/// Launches `kernel` on `grid` blocks of `block` threads with `smem_bytes` of dynamic shared
/// memory on `stream`; with `early`, as a programmatic dependent of the kernel ahead of it on the
/// stream (only on devices of compute capability 9.0 and up), which may then start before that one
/// ends and must wait for it (griddepcontrol.wait) before it reads what that one writes. Throws
/// flashvision::Error naming `what` when the launch fails.
template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem_bytes,
                   cudaStream_t stream, bool early, const char* what, Args&&... args) {
  cudaLaunchAttribute early_start{};
  early_start.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early_start.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = early ? &early_start : nullptr;
  config.numAttrs = early ? 1 : 0;
  cuda_check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what);
}

}  // namespace flashvision::detail
