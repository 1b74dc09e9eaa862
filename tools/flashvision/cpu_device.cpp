// BenchDevice for host memory: steady_clock timing and peak-RSS memory measurement.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include <omp.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bench_device.h"
#include "proc_memory.h"

namespace flashvision::tool {

namespace {

constexpr std::size_t kAlignment = 64;
constexpr int64_t kDefaultNaiveCapBytes = int64_t{4096} << 20;

void release_host(void* data) { ::operator delete(data, std::align_val_t(kAlignment)); }

class CpuDevice final : public BenchDevice {
 public:
  explicit CpuDevice(int threads) {
    if (threads > 0) omp_set_num_threads(threads);
#if defined(__GLIBC__)
    // glibc raises its mmap threshold after the first free of a large block and then keeps freed
    // blocks of up to 32 MB resident for reuse; a later call reusing them would measure as zero
    // extra memory. A fixed threshold (the default value) makes every large block a fresh
    // mapping, so each call's peak RSS counts all the memory it allocates.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  }

  Device device() const override { return Device::cpu; }
  int device_index() const override { return 0; }
  DeviceDefaults defaults() const override { return {DType::f32, 1, 20, kDefaultNaiveCapBytes}; }
  DeviceInfo info() const override { return {}; }

  DeviceBuffer allocate(std::size_t bytes) override {
    void* data = ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t(kAlignment));
    std::memset(data, 0, bytes);
    return DeviceBuffer(data, bytes, &release_host);
  }
  void upload(const DeviceBuffer& buffer, const void* host, std::size_t bytes) override {
    std::memcpy(buffer.data(), host, bytes);
  }
  void fill_bytes(const DeviceBuffer& buffer, unsigned char value) override {
    std::memset(buffer.data(), value, buffer.bytes());
  }
  const std::byte* host_readable(const DeviceBuffer& buffer, std::vector<std::byte>&) override {
    return buffer.as<const std::byte>();
  }

  void* stream() const override { return nullptr; }
  double time_call_ms(const std::function<void()>& call) override {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }

  void begin_memory_probe() override { probe_.begin(); }
  std::optional<int64_t> end_memory_probe() override { return probe_.end(); }

  DType naive_dtype(DType) const override { return DType::f32; }
  int64_t naive_buffer_bytes(const Shape& shape, DType, bool backward) const override {
    return cpu_naive_buffer_bytes(shape, backward, omp_get_max_threads());
  }
  void naive_forward(const NaiveProblem& problem) override { cpu_naive_forward(problem); }
  void naive_forward_backward(const NaiveProblem& problem) override {
    cpu_naive_forward_backward(problem);
  }

 private:
  PeakRssProbe probe_;
};

}  // namespace

std::unique_ptr<BenchDevice> make_cpu_device(int threads) {
  return std::make_unique<CpuDevice>(threads);
}

}  // namespace flashvision::tool
