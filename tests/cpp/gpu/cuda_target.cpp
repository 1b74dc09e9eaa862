// CUDA implementation of the test suite's device seam.
#include "cuda_target.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashvision/flashvision.h"

namespace flashvision::testing {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

class DeviceBuffer final : public TargetBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    check(cudaMalloc(&data_, bytes == 0 ? 16 : bytes), "cudaMalloc");
  }
  ~DeviceBuffer() override { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() override { return data_; }
  void upload(const void* host, std::size_t bytes) override {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before upload");
    check(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy upload");
  }
  void download(void* host, std::size_t bytes) override {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before download");
    check(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy download");
  }

 private:
  void* data_ = nullptr;
};

}  // namespace

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

const char* to_string(CudaKernel kernel) { return kernel == CudaKernel::sm90 ? "sm90" : "sm80"; }

Target cuda_target(CudaKernel kernel) {
  Target target;
  target.name = std::string("cuda-") + to_string(kernel);
  target.device = Device::cuda;
  target.device_index = 0;
  target.backend = kernel == CudaKernel::sm90 ? Backend::cuda_sm90 : Backend::cuda_sm80;
  target.backward_backend = target.backend;
  // The Hopper backward serves head dims up to 128 and no deterministic mode: the rest of an sm90
  // target's backward calls run on sm80.
  if (kernel == CudaKernel::sm90) target.backward_fallback = Backend::cuda_sm80;
  target.allocate = [](std::size_t bytes) { return std::make_unique<DeviceBuffer>(bytes); };
  return target;
}

std::string kernel_unavailable(CudaKernel kernel) {
  if (gpu_count() == 0) return "no CUDA device found: GPU test skipped";
  if (kernel == CudaKernel::sm80) return {};
  const std::vector<Backend> backends = compiled_backends();
  if (std::find(backends.begin(), backends.end(), Backend::cuda_sm90) == backends.end()) {
    return "this build has no sm90 kernels: sm90 test skipped";
  }
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (major != 9 || minor != 0) {
    return "GPU 0 has compute capability " + std::to_string(major) + "." + std::to_string(minor) +
           ", the sm90 kernels need 9.0: sm90 test skipped";
  }
  return {};
}

}  // namespace flashvision::testing
