// Picks the compiled sm90 forward instantiation for a (dtype, head-dim bucket, tile).
#pragma once

#include "cuda/sm90/params.h"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Whether this build compiled the sm90 forward of the head-dim bucket.
bool bucket_compiled(int bucket);
/// Comma-separated list of the compiled sm90 buckets, for messages.
const char* compiled_buckets_text();
/// Forward for a f16/bf16 problem in a bucket this build compiled (FLASHVISION_HEAD_DIMS), with
/// tiles of `block_m` query rows and `block_n` keys per step: one of the bucket's tiles
/// (tile_config.h, fwd_block_m and fwd_block_n), whose rows and keys the Q and the K, V tensor
/// maps of `params` must use as their box rows.
void forward(DType dtype, int bucket, int block_m, int block_n, const FwdParams& params,
             void* stream);

}  // namespace flashvision::detail::sm90
