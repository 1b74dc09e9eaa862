#include "cuda/sm80/bwd_tail_pdl.h"

#include <cuda_runtime.h>

#include "api/env_option.h"
#include "cuda/common/cuda_check.h"

namespace flashvision::detail::sm80 {

bool bwd_tail_pdl_requested() {
  const int early = env_choice("FLASHVISION_SM80_BWD_TAIL_PDL", {{"1", 1}, {"0", 0}}, 1,
                               "1 (the split kernel starts as SMs free up) or 0 (after the unsplit "
                               "kernel)");
  return early == 1;
}

bool bwd_tail_pdl_enabled() {
  if (!bwd_tail_pdl_requested()) return false;
  int device = 0;
  int major = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice (sm80 backward tail launch)");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute (sm80 backward tail launch)");
  return major >= 9;
}

}  // namespace flashvision::detail::sm80
