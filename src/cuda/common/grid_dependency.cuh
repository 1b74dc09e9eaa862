// Programmatic dependent launch (PTX griddepcontrol, sm_90 and up): a kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start before the previous kernel on its
// stream ends, once every CTA of that kernel has signalled or exited. On older architectures both
// calls compile to nothing, which is also what they do at run time for a launch without the
// attribute.
#pragma once

namespace flashvision::detail::ptx {

/// Lets the dependent grid (the next launch on the stream, if it carries the attribute) start once
/// every CTA of this grid has called this or exited.
__device__ __forceinline__ void launch_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits until the grids this one depends on have completed and their memory writes are visible.
__device__ __forceinline__ void wait_for_prerequisite_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace flashvision::detail::ptx
