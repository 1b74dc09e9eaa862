// Where a test runs: the device seam of the test suite.
//
// Every check is written against a Target, never against host pointers directly: tensors are
// built as host images, uploaded to the target's memory, handed to flashvision with the target's
// device and forced backend, and downloaded again for comparison. Only the CPU target exists in
// this directory. A CUDA test directory adds its own target by implementing TargetBuffer with
// cudaMalloc/cudaMemcpy (download must wait for the queued work, e.g. a blocking cudaMemcpy on the
// default stream) and returning a Target{name, Device::cuda, ordinal, Backend::cuda_sm80, ...};
// the same checks and case lists then run unchanged on the GPU.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "flashvision/flashvision.h"

namespace flashvision::testing {

/// Memory owned by one target.
class TargetBuffer {
 public:
  virtual ~TargetBuffer() = default;
  /// Address handed to flashvision (device memory for GPU targets).
  virtual void* data() = 0;
  /// Copies `bytes` host bytes into the buffer; complete on return.
  virtual void upload(const void* host, std::size_t bytes) = 0;
  /// Copies the buffer back to the host after all queued work has finished; complete on return.
  virtual void download(void* host, std::size_t bytes) = 0;
};

/// A device plus the backend forced on it.
struct Target {
  std::string name;                ///< short name for traces, e.g. "cpu" or "cuda-sm80"
  Device device = Device::cpu;     ///< memory space of every tensor
  int device_index = 0;            ///< GPU ordinal
  Backend backend = Backend::cpu;  ///< backend forced in forward calls
  Backend backward_backend = Backend::cpu;  ///< backend forced in backward calls
  /// Backward calls the forced backend does not serve (the library says so when asked) run on
  /// this one instead: the sm90 target's backward covers only some head dims and modes.
  std::optional<Backend> backward_fallback;
  /// Allocates a buffer of at least `bytes` bytes on the device.
  std::function<std::unique_ptr<TargetBuffer>(std::size_t bytes)> allocate;
};

/// The CPU backend on host memory.
Target cpu_target();

}  // namespace flashvision::testing
