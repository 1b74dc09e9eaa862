// CUDA implementation of the test suite's device seam.
#include "cuda_target.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

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

Target cuda_target() {
  Target target;
  target.name = "cuda-sm80";
  target.device = Device::cuda;
  target.device_index = 0;
  target.backend = Backend::cuda_sm80;
  target.allocate = [](std::size_t bytes) { return std::make_unique<DeviceBuffer>(bytes); };
  return target;
}

}  // namespace flashvision::testing
