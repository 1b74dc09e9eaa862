// Picks the compiled sm80 instantiation for a (dtype, head-dim bucket).
#pragma once

#include "cuda/sm80/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm80 {

/// Whether this build compiled the head-dim bucket (FLASHVISION_HEAD_DIMS; bucket 512 has the
/// backward only).
bool bucket_compiled(int bucket);
/// Comma-separated list of the compiled buckets, for messages.
const char* compiled_buckets_text();
/// Forward for a f16/bf16 problem in a compiled bucket up to kFwdMaxHeadDim.
void forward(DType dtype, int bucket, const FwdParams& params, void* stream);
/// CTAs of the forward's tile variant `tile_variant` in K/V layout `kv_mode` (FwdKvMode) that one
/// SM of the current device runs at a time, for a f16/bf16 problem in a compiled bucket up to
/// kFwdMaxHeadDim.
int forward_ctas_per_sm(DType dtype, int bucket, int tile_variant, int kv_mode);
/// The three backward kernels for a f16/bf16 problem in a compiled bucket.
void backward_main(DType dtype, int bucket, const BwdParams& params, void* stream);
/// rowsum(dO * O) into params.dvec.
void backward_preprocess(DType dtype, const BwdParams& params, void* stream);
/// params.dq_accum * scale into dq.
void backward_convert_dq(DType dtype, const BwdParams& params, void* stream);
/// The split partials into dk and dv (params.num_splits > 1 or params.tail_parts > 1).
void backward_reduce_dkdv(DType dtype, const BwdParams& params, void* stream);

}  // namespace flashvision::detail::sm80
