// make_cuda_device() of a build whose tool has no CUDA device layer (see bench_device.h).
#include "bench_device.h"
#include "flashvision/error.h"

namespace flashvision::tool {

std::unique_ptr<BenchDevice> make_cuda_device(int) {
#if defined(FLASHVISION_HAVE_CUDA)
  throw Error(
      "--device cuda: the library has CUDA backends but this flashvision tool was built without "
      "its "
      "CUDA device layer (tools/flashvision/cuda_device.cu)");
#else
  throw Error(
      "--device cuda: this build has no CUDA backend (configure with -DFLASHVISION_CUDA=ON)");
#endif
}

}  // namespace flashvision::tool
