// BenchDevice for one CUDA GPU: cudaMalloc'd buffers, CUDA-event timing on a dedicated stream
// with a cold L2 for every timed call, peak extra memory from the stream-ordered allocator's
// counters (flashvision's backward workspace and the naive path's S and P come from
// cudaMallocAsync), and the cuBLAS naive path of naive_cuda.h.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

#include "bench_device.h"
#include "flashvision/error.h"
#include "naive_cuda.h"

namespace flashvision::tool {

namespace {

constexpr int kWarmup = 3;
constexpr int kRepeat = 50;
constexpr int64_t kNaiveCapBytes = int64_t{32} << 30;
constexpr int kFlushBlocks = 1024;
constexpr int kFlushThreads = 256;
constexpr int kL2Multiple = 4;  // the flush reads this many L2 sizes: the L2 is split in halves

void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) {
    throw Error("CUDA error in " + what + ": " + cudaGetErrorString(status));
  }
}

void release_device(void* data) { cudaFree(data); }

struct StreamDeleter {
  void operator()(cudaStream_t stream) const { cudaStreamDestroy(stream); }
};
struct EventDeleter {
  void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
};
using StreamHandle = std::unique_ptr<CUstream_st, StreamDeleter>;
using EventHandle = std::unique_ptr<CUevent_st, EventDeleter>;

EventHandle make_event() {
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreate(&event), "cudaEventCreate");
  return EventHandle(event);
}

/// Reads `count` 16-byte words so that the L2 holds none of the timed call's operands afterwards.
/// Reads leave clean lines, which the timed call then evicts without writing anything back.
__global__ void read_through(const int4* data, int64_t count, int* sink) {
  int folded = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int4 word = data[i];
    folded ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  // The buffer holds zeros, so this store never happens; it keeps the loads from being removed.
  if (folded == 1) *sink = folded;
}

/// The NVIDIA kernel module's version ("580.159.04", as nvidia-smi prints it), or empty.
std::string kernel_module_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line, word;
  if (!std::getline(file, line)) return "";
  std::istringstream words(line);
  while (words >> word) {
    if (word[0] >= '0' && word[0] <= '9' && word.find('.') != std::string::npos) return word;
  }
  return "";
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// Usage and reservation of the device's memory pool, and the device's free memory.
struct MemorySample {
  int64_t pool_used = 0;
  int64_t pool_reserved = 0;
  int64_t device_free = 0;
};

class CudaDevice final : public BenchDevice {
 public:
  explicit CudaDevice(int index) : index_(index) {
    check_cuda(cudaSetDevice(index), "cudaSetDevice(" + std::to_string(index) + ")");
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    stream_.reset(stream);
    start_ = make_event();
    stop_ = make_event();
    // cudaMallocAsync (flashvision's backward workspace, the naive S and P) takes from the
    // device's current pool. By default the pool returns freed memory to the device at every
    // synchronization, so each timed call would map fresh memory; keeping it for the next call is
    // what PyTorch's caching allocator does for the peers. allocate() trims it between cases.
    check_cuda(cudaDeviceGetMemPool(&pool_, index), "cudaDeviceGetMemPool");
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    check_cuda(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all),
               "cudaMemPoolSetAttribute(release threshold)");
    int l2_bytes = 0;
    check_cuda(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, index),
               "cudaDeviceGetAttribute(L2 size)");
    flush_ = allocate(std::max<std::size_t>(std::size_t{1} << 20,
                                            std::size_t{kL2Multiple} * std::size_t(l2_bytes)));
    sink_ = allocate(sizeof(int));
    naive_ = std::make_unique<CudaNaive>(stream_.get());
  }

  Device device() const override { return Device::cuda; }
  int device_index() const override { return index_; }
  DeviceDefaults defaults() const override {
    return {DType::bf16, kWarmup, kRepeat, kNaiveCapBytes};
  }

  DeviceInfo info() const override {
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, index_), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    std::string module = kernel_module_version();
    DeviceInfo result;
    result.gpu = prop.name;
    result.driver = module.empty() ? "CUDA driver API " + cuda_version_text(driver) : module;
    result.cuda = cuda_version_text(runtime);
    return result;
  }

  DeviceBuffer allocate(std::size_t bytes) override {
    // New buffers mean a new case: what the pool kept for reuse between the calls of the last
    // case (the naive S and P above all) goes back to the device first.
    synchronize();
    check_cuda(cudaMemPoolTrimTo(pool_, 0), "cudaMemPoolTrimTo");
    void* data = nullptr;
    check_cuda(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)),
               "cudaMalloc(" + std::to_string(bytes) + " bytes)");
    DeviceBuffer buffer(data, bytes, &release_device);
    fill_bytes(buffer, 0);
    return buffer;
  }
  void upload(const DeviceBuffer& buffer, const void* host, std::size_t bytes) override {
    check_cuda(cudaMemcpyAsync(buffer.data(), host, bytes, cudaMemcpyHostToDevice, stream_.get()),
               "cudaMemcpyAsync (upload)");
    synchronize();
  }
  void fill_bytes(const DeviceBuffer& buffer, unsigned char value) override {
    check_cuda(cudaMemsetAsync(buffer.data(), value, buffer.bytes(), stream_.get()),
               "cudaMemsetAsync");
    synchronize();
  }
  const std::byte* host_readable(const DeviceBuffer& buffer,
                                 std::vector<std::byte>& scratch) override {
    scratch.resize(buffer.bytes());
    check_cuda(cudaMemcpyAsync(scratch.data(), buffer.data(), buffer.bytes(),
                               cudaMemcpyDeviceToHost, stream_.get()),
               "cudaMemcpyAsync (download)");
    synchronize();
    return scratch.data();
  }

  void* stream() const override { return stream_.get(); }

  double time_call_ms(const std::function<void()>& call) override {
    // BENCH.md rotates input sets that fit in L2; the runner holds one set per case, so every
    // timed call starts with a cold L2 instead. The call then starts on an idle GPU, as the
    // peers' timing does, so its launch cost is part of the time.
    flush_l2();
    synchronize();
    check_cuda(cudaEventRecord(start_.get(), stream_.get()), "cudaEventRecord");
    call();
    check_cuda(cudaEventRecord(stop_.get(), stream_.get()), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_.get()), "the timed call");
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
    return ms;
  }

  void begin_memory_probe() override {
    synchronize();
    std::uint64_t zero = 0;
    check_cuda(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero),
               "cudaMemPoolSetAttribute(used high)");
    probe_start_ = sample_memory();
  }

  std::optional<int64_t> end_memory_probe() override {
    synchronize();
    const int64_t used_high = pool_attribute(cudaMemPoolAttrUsedMemHigh);
    const MemorySample end = sample_memory();
    const int64_t pool_peak = std::max<int64_t>(0, used_high - probe_start_.pool_used);
    // Memory taken outside the pool and still held at the end (a cudaMalloc without its free)
    // shows in the device's free memory; the pool's own growth is in pool_peak already.
    const int64_t held_outside = (probe_start_.device_free - end.device_free) -
                                 (end.pool_reserved - probe_start_.pool_reserved);
    return pool_peak + std::max<int64_t>(0, held_outside);
  }

  DType naive_dtype(DType bench_dtype) const override { return bench_dtype; }
  int64_t naive_buffer_bytes(const Shape& shape, DType naive_dtype, bool) const override {
    return CudaNaive::buffer_bytes(shape, naive_dtype);
  }
  void naive_forward(const NaiveProblem& problem) override { naive_->forward(problem); }
  void naive_forward_backward(const NaiveProblem& problem) override {
    naive_->forward_backward(problem);
  }

 private:
  void synchronize() const {
    check_cuda(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
  }

  void flush_l2() {
    read_through<<<kFlushBlocks, kFlushThreads, 0, stream_.get()>>>(
        flush_.as<const int4>(), static_cast<int64_t>(flush_.bytes() / sizeof(int4)),
        sink_.as<int>());
    check_cuda(cudaGetLastError(), "L2 flush launch");
  }

  int64_t pool_attribute(cudaMemPoolAttr attribute) const {
    std::uint64_t value = 0;
    check_cuda(cudaMemPoolGetAttribute(pool_, attribute, &value), "cudaMemPoolGetAttribute");
    return static_cast<int64_t>(value);
  }

  MemorySample sample_memory() const {
    std::size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    return {pool_attribute(cudaMemPoolAttrUsedMemCurrent),
            pool_attribute(cudaMemPoolAttrReservedMemCurrent), static_cast<int64_t>(free_bytes)};
  }

  // Members are destroyed in reverse order: the naive path goes before the stream it uses.
  int index_;
  StreamHandle stream_;
  EventHandle start_, stop_;
  cudaMemPool_t pool_ = nullptr;
  DeviceBuffer flush_, sink_;
  std::unique_ptr<CudaNaive> naive_;
  MemorySample probe_start_;
};

}  // namespace

std::unique_ptr<BenchDevice> make_cuda_device(int device_index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw Error(std::string("--device cuda: no usable CUDA device (cudaGetDeviceCount: ") +
                cudaGetErrorString(status) + "; is there an NVIDIA GPU and driver?)");
  }
  if (device_index < 0 || device_index >= count) {
    throw Error("--device cuda: device " + std::to_string(device_index) + " does not exist (" +
                std::to_string(count) + " CUDA device(s) found)");
  }
  return std::make_unique<CudaDevice>(device_index);
}

}  // namespace flashvision::tool
