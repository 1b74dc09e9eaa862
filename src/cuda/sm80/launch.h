// Host-side entry points of the compiled sm80 instantiations (one per dtype and head-dim bucket).
#pragma once

#include "cuda/sm80/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm80 {

/// Queues the forward kernel for bucket kHeadDim on `stream` (a cudaStream_t).
template <DType kDType, int kHeadDim>
void run_fwd(const FwdParams& params, void* stream);

/// CTAs of the forward's tile variant `tile_variant` in K/V layout `kv_mode` (params.h) that one
/// SM of the current device runs at a time.
template <DType kDType, int kHeadDim>
int fwd_ctas_per_sm(int tile_variant, int kv_mode);

/// Queues the main backward kernel (dK, dV and the fp32 dQ accumulation) on `stream`.
template <DType kDType, int kHeadDim>
void run_bwd(const BwdParams& params, void* stream);

/// Queues D = rowsum(dO * O) into params.dvec.
template <DType kDType>
void run_bwd_preprocess(const BwdParams& params, void* stream);

/// Queues dQ = scale * dq_accum converted to the storage dtype.
template <DType kDType>
void run_bwd_convert_dq(const BwdParams& params, void* stream);

/// Queues dK = scale * sum of the split partials (of the whole grid or of the last-wave split's
/// tiles) and dV = their sum, in the storage dtype.
template <DType kDType>
void run_bwd_reduce_dkdv(const BwdParams& params, void* stream);

}  // namespace flashvision::detail::sm80
