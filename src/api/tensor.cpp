// Helpers for describing tensors.
#include <cstddef>

#include "flashvision/error.h"
#include "flashvision/tensor.h"

namespace flashvision {

const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f8e4m3: return "f8e4m3";
    case DType::i32: return "i32";
  }
  return "unknown-dtype";
}

const char* to_string(Device device) noexcept {
  switch (device) {
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
  }
  return "unknown-device";
}

std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::f8e4m3: return 1;
    case DType::i32: return 4;
  }
  return 0;
}

namespace {

TensorView make_view(void* data, DType dtype, std::initializer_list<int64_t> shape, Device device,
                     int device_index) {
  if (shape.size() < 1 || shape.size() > 4) {
    throw Error("a tensor view has rank " + std::to_string(shape.size()) + ", expected 1 to 4");
  }
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.device = device;
  view.device_index = device_index;
  view.rank = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t extent : shape) view.shape[i++] = extent;
  return view;
}

}  // namespace

TensorView contiguous_view(void* data, DType dtype, std::initializer_list<int64_t> shape,
                           Device device, int device_index) {
  TensorView view = make_view(data, dtype, shape, device, device_index);
  int64_t running = 1;
  for (int i = view.rank - 1; i >= 0; --i) {
    view.stride[i] = running;
    running *= view.shape[i];
  }
  return view;
}

TensorView strided_view(void* data, DType dtype, std::initializer_list<int64_t> shape,
                        std::initializer_list<int64_t> stride, Device device, int device_index) {
  if (stride.size() != shape.size()) {
    throw Error("strided_view got " + std::to_string(stride.size()) +
                " strides for a shape of rank " + std::to_string(shape.size()));
  }
  TensorView view = make_view(data, dtype, shape, device, device_index);
  int i = 0;
  for (int64_t s : stride) view.stride[i++] = s;
  return view;
}

}  // namespace flashvision
