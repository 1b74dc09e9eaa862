// Non-owning tensor descriptions: the only way data crosses the public API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace flashvision {

/// Element type of a tensor.
enum class DType : int {
  f32,     ///< IEEE float32
  f16,     ///< IEEE float16
  bf16,    ///< bfloat16
  f8e4m3,  ///< float8 e4m3 (reserved for the Hopper FP8 path)
  i32,     ///< int32 (cu_seqlens)
};

/// Where a tensor's memory lives.
enum class Device : int {
  cpu,   ///< host memory
  cuda,  ///< CUDA device memory (device_index selects the GPU)
};

/// Short name of a dtype ("f32", "bf16", ...).
const char* to_string(DType dtype) noexcept;
/// Short name of a device ("cpu", "cuda").
const char* to_string(Device device) noexcept;
/// Size in bytes of one element of `dtype`.
std::size_t element_size(DType dtype) noexcept;

/// Non-owning view of a tensor of rank 1 to 4 with element strides.
/// The last dimension must be contiguous (stride 1) wherever flashvision reads it; other strides
/// are free, so [B, N, H, D] and [B, H, N, D] storage are both described without a copy.
struct TensorView {
  void* data = nullptr;             ///< first element
  DType dtype = DType::f32;         ///< element type
  Device device = Device::cpu;      ///< memory space
  int device_index = 0;             ///< GPU ordinal for Device::cuda
  int rank = 0;                     ///< number of dimensions in use (0 = absent)
  std::array<int64_t, 4> shape{};   ///< sizes of the first `rank` dimensions
  std::array<int64_t, 4> stride{};  ///< element strides of the first `rank` dimensions

  /// True when the view describes a tensor (rank > 0 or data set).
  bool present() const noexcept { return rank > 0 || data != nullptr; }
};

/// A view of row-major (C-contiguous) memory with the given shape.
TensorView contiguous_view(void* data, DType dtype, std::initializer_list<int64_t> shape,
                           Device device = Device::cpu, int device_index = 0);

/// A view with explicit element strides (same length as `shape`).
TensorView strided_view(void* data, DType dtype, std::initializer_list<int64_t> shape,
                        std::initializer_list<int64_t> stride, Device device = Device::cpu,
                        int device_index = 0);

}  // namespace flashvision
