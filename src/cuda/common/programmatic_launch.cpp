#include "cuda/common/programmatic_launch.h"

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.h"

namespace flashvision::detail {

bool programmatic_launch_supported() {
  int device = 0;
  int major = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice (before a programmatic dependent launch)");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute (before a programmatic dependent launch)");
  return major >= 9;
}

}  // namespace flashvision::detail
