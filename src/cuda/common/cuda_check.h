// Turns CUDA runtime errors into flashvision::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "flashvision/error.h"

namespace flashvision::detail {

/// Throws flashvision::Error naming `what` and the CUDA error string when `status` is an error.
inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
  }
}

}  // namespace flashvision::detail
