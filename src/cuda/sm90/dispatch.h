// Picks the compiled sm90 instantiation for a (dtype, head-dim bucket, forward tile) or a
// (dtype, head-dim bucket) of the backward.
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
/// maps of `params` must use as their box rows. An f8e4m3 problem runs one of the bucket's FP8
/// tiles (fp8_tile_exists).
void forward(DType dtype, int bucket, int block_m, int block_n, const FwdParams& params,
             void* stream);

/// Whether this build compiled the sm90 backward of the bucket (bwd_config.h lists the buckets it
/// serves; FLASHVISION_HEAD_DIMS those compiled).
bool bwd_bucket_compiled(int bucket);
/// The backward main kernel for a f16/bf16 problem in a bucket bwd_bucket_compiled accepts; the
/// sm80 path's preprocess must have run and its dQ convert runs after.
void backward_main(DType dtype, int bucket, const BwdParams& params, void* stream);

}  // namespace flashvision::detail::sm90
