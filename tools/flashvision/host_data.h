// Host-side tensor data: random inputs in a storage dtype and element access as float/double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flashvision/tensor.h"

namespace flashvision::tool {

/// `count` standard-normal values rounded to `dtype` (f32, bf16 or f16). The values depend only
/// on (seed, count), not on the thread count.
std::vector<std::byte> random_normal(int64_t count, DType dtype, uint64_t seed);

/// Element `index` of `dtype` data, widened to double.
double load_as_double(const std::byte* data, DType dtype, int64_t index);

/// Elements [index, index + count) of `dtype` data, widened to double into `out`.
void load_as_double(const std::byte* data, DType dtype, int64_t index, int64_t count, double* out);

/// The first `count` elements of `dtype` data as float32.
std::vector<float> to_float32(const std::byte* data, DType dtype, int64_t count);

}  // namespace flashvision::tool
