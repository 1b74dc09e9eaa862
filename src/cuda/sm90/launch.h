// Host-side entry point of the compiled sm90 forward instantiations (one per dtype, bucket
// and tile).
#pragma once

#include "cuda/sm90/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Queues the forward kernel for bucket kHeadDim with tiles of kBlockM query rows and kBlockN
/// keys per step on `stream` (a cudaStream_t).
template <DType kDType, int kHeadDim, int kBlockM, int kBlockN>
void run_fwd(const FwdParams& params, void* stream);

}  // namespace flashvision::detail::sm90
