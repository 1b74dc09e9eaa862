// A negated copy of the keys, for forwards with a negative softmax scale (cuda_backend.cpp's
// with_positive_scale): softmax(Q K^T s) = softmax(Q (-K)^T (-s)).
#pragma once

#include <cstdint>

#include "cuda/sm80/params.h"

namespace flashvision::detail {

/// Where the keys are and where their negated copy goes: `seqs` sequences of `rows` rows of
/// `heads` heads of `head_dim` 16-bit elements (f16 or bf16, whose sign is one bit: negating is
/// exact), read through src's strides (elements) and written with dst's.
struct NegateKeysParams {
  sm80::TensorParams src, dst;
  int64_t seqs = 0, rows = 0, heads = 0, head_dim = 0;
};

/// Queues dst = -src on `stream`.
void negate_keys(const NegateKeysParams& params, void* stream);

}  // namespace flashvision::detail
