// Picks the compiled sm90 forward instantiation for a (dtype, head-dim bucket, key-block width).
#pragma once

#include "cuda/sm90/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Whether this build compiled the sm90 forward of the head-dim bucket.
bool bucket_compiled(int bucket);
/// Comma-separated list of the compiled sm90 buckets, for messages.
const char* compiled_buckets_text();
/// Forward for a f16/bf16 problem in a bucket this build compiled (FLASHVISION_HEAD_DIMS), with
/// `block_n` keys per step: one of the bucket's widths (tile_config.h, fwd_block_n), which the
/// K and V tensor maps of `params` must use as their box rows.
void forward(DType dtype, int bucket, int block_n, const FwdParams& params, void* stream);

}  // namespace flashvision::detail::sm90
