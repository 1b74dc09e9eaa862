// Maps the public DType onto the CUDA element types the kernels are written in.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "flashvision/tensor.h"

namespace flashvision::detail {

/// CUDA element type of a 16-bit or FP8 DType.
template <DType kDType>
struct CudaElement;
template <>
struct CudaElement<DType::f16> {
  using type = __half;
};
template <>
struct CudaElement<DType::bf16> {
  using type = __nv_bfloat16;
};
template <>
struct CudaElement<DType::f8e4m3> {
  using type = __nv_fp8_e4m3;
};

}  // namespace flashvision::detail
