// The message of a call on CUDA tensors that no CUDA kernel takes (dispatch.cpp's choice of
// backend), from the reasons the portable and the Hopper kernels gave.
#pragma once

#include <cstdint>
#include <string>

#include "flashvision/tensor.h"

namespace flashvision::detail {

/// Why no CUDA kernel takes a forward or backward of `dtype` inputs at head dim `head_dim`, given
/// why the portable (sm80) kernels refused it (`sm80_why`) and why the Hopper forward did
/// (`sm90_why`, empty where it was not asked). f8e4m3 inputs only the Hopper forward takes, so its
/// reason is the one that helps; forward head dims above 256 only it serves, so both are given.
inline std::string cuda_refusal(DType dtype, int64_t head_dim, const std::string& sm80_why,
                                const std::string& sm90_why) {
  if (sm90_why.empty()) return sm80_why;
  if (dtype == DType::f8e4m3) {
    return "f8e4m3 inputs run on the Hopper (sm90) forward only, which cannot take this call: " +
           sm90_why;
  }
  if (head_dim > 256) return sm80_why + "; the Hopper forward: " + sm90_why;
  return sm80_why;
}

}  // namespace flashvision::detail
