// Host-side entry points of the compiled sm90 instantiations: the forward's (one per dtype,
// bucket and tile) and the backward main kernel's (one per dtype and bucket it serves).
#pragma once

#include "cuda/sm90/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Queues the forward kernel for bucket kHeadDim with tiles of kBlockM query rows and kBlockN
/// keys per step on `stream` (a cudaStream_t).
template <DType kDType, int kHeadDim, int kBlockM, int kBlockN>
void run_fwd(const FwdParams& params, void* stream);

/// Queues the backward main kernel for bucket kHeadDim (bwd_config.h) on `stream`.
template <DType kDType, int kHeadDim>
void run_bwd(const BwdParams& params, void* stream);

}  // namespace flashvision::detail::sm90
