// The device seam of the benchmark: memory, timing, memory measurement and the naive baseline.
//
// Everything device-specific sits behind BenchDevice so that the benchmark logic (bench_runner)
// is written once. cpu_device.cpp implements it for host memory, cuda_device.cu for a CUDA device
// (cudaMalloc'd buffers, CUDA-event timing on one stream, peak bytes from the stream-ordered
// allocator's counters, a cuBLAS naive path that materializes S on the GPU);
// tools/flashvision/CMakeLists.txt compiles the latter instead of cuda_device_unavailable.cpp in
// CUDA builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_cases.h"
#include "flashvision/tensor.h"
#include "naive_attention.h"

namespace flashvision::tool {

/// Memory owned by a BenchDevice, freed on destruction.
class DeviceBuffer {
 public:
  using Release = void (*)(void* data);

  DeviceBuffer() = default;
  DeviceBuffer(void* data, std::size_t bytes, Release release)
      : data_(data), bytes_(bytes), release_(release) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    release_ = other.release_;
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  /// Frees the memory now.
  void reset() {
    if (data_ != nullptr) release_(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Release release_ = nullptr;
};

/// Per-device defaults of the bench options.
struct DeviceDefaults {
  DType dtype = DType::f32;
  int warmup = 1;
  int repeat = 20;
  int64_t naive_cap_bytes = 0;
};

/// What the results file records about the machine (null fields on the CPU).
struct DeviceInfo {
  std::optional<std::string> gpu;
  std::optional<std::string> driver;
  std::optional<std::string> cuda;
};

/// One device the benchmark runs on.
class BenchDevice {
 public:
  virtual ~BenchDevice() = default;

  virtual Device device() const = 0;
  virtual int device_index() const = 0;
  virtual DeviceDefaults defaults() const = 0;
  virtual DeviceInfo info() const = 0;

  /// Allocates `bytes` of device memory; every page is written before return so that later
  /// memory measurements do not count it.
  virtual DeviceBuffer allocate(std::size_t bytes) = 0;
  /// Copies host bytes into the start of `buffer`.
  virtual void upload(const DeviceBuffer& buffer, const void* host, std::size_t bytes) = 0;
  /// Sets every byte of `buffer` (0xff makes NaN in every float dtype: outputs are poisoned).
  virtual void fill_bytes(const DeviceBuffer& buffer, unsigned char value) = 0;
  /// The buffer's bytes readable on the host: the buffer itself where the host can read device
  /// memory, else a copy made in `scratch`.
  virtual const std::byte* host_readable(const DeviceBuffer& buffer,
                                         std::vector<std::byte>& scratch) = 0;

  /// cudaStream_t for flashvision calls (nullptr on the CPU).
  virtual void* stream() const = 0;
  /// Runs `call` once and returns its wall time in milliseconds, device work included.
  virtual double time_call_ms(const std::function<void()>& call) = 0;

  /// Starts measuring the peak of extra memory.
  virtual void begin_memory_probe() = 0;
  /// Peak bytes allocated beyond the state at begin_memory_probe(); nullopt when unmeasurable.
  virtual std::optional<int64_t> end_memory_probe() = 0;

  /// Element type of the naive path's operands when the benchmark runs in `bench_dtype`: f32
  /// (the runner hands float32 copies) or `bench_dtype` itself (the benchmark's own buffers).
  virtual DType naive_dtype(DType bench_dtype) const = 0;
  /// Bytes the naive path would allocate for scores (S, P, dP) with operands of `naive_dtype`,
  /// compared with --naive-cap-mb.
  virtual int64_t naive_buffer_bytes(const Shape& shape, DType naive_dtype,
                                     bool backward) const = 0;
  /// Naive forward on this device's memory.
  virtual void naive_forward(const NaiveProblem& problem) = 0;
  /// Naive forward then backward on this device's memory.
  virtual void naive_forward_backward(const NaiveProblem& problem) = 0;
};

/// The host CPU; `threads` > 0 limits OpenMP threads.
std::unique_ptr<BenchDevice> make_cpu_device(int threads);

/// A CUDA device; throws flashvision::Error saying why when this build or machine has none.
std::unique_ptr<BenchDevice> make_cuda_device(int device_index);

}  // namespace flashvision::tool
