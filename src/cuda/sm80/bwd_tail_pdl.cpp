#include "cuda/sm80/bwd_tail_pdl.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "cuda/common/cuda_check.h"
#include "flashvision/error.h"

namespace flashvision::detail::sm80 {

bool parse_bwd_tail_pdl(const char* value) {
  if (value == nullptr) return true;
  const std::string text(value);
  if (text.empty() || text == "1") return true;
  if (text == "0") return false;
  throw Error("FLASHVISION_SM80_BWD_TAIL_PDL is \"" + text +
              "\", expected 1 (the split kernel starts as SMs free up) or 0 (after the unsplit "
              "kernel)");
}

bool bwd_tail_pdl_enabled() {
  if (!parse_bwd_tail_pdl(std::getenv("FLASHVISION_SM80_BWD_TAIL_PDL"))) return false;
  int device = 0;
  int major = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice (sm80 backward tail launch)");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute (sm80 backward tail launch)");
  return major >= 9;
}

}  // namespace flashvision::detail::sm80
