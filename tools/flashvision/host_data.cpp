#include "host_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "dtype_convert.h"
#include "flashvision/error.h"

namespace flashvision::tool {

namespace {

/// Counter-based generator (splitmix64): chunk c of a tensor draws from mix(seed, c), so the
/// values do not depend on how OpenMP splits the chunks.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in (0, 1]: never 0, so log() stays finite.
double unit_interval(uint64_t& state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1p-53;
}

void store(std::byte* data, DType dtype, int64_t index, float value) {
  switch (dtype) {
    case DType::f32: std::memcpy(data + index * 4, &value, 4); return;
    case DType::bf16: {
      const uint16_t bits = float_to_bf16(value);
      std::memcpy(data + index * 2, &bits, 2);
      return;
    }
    case DType::f16: {
      const uint16_t bits = float_to_f16(value);
      std::memcpy(data + index * 2, &bits, 2);
      return;
    }
    default: throw Error(std::string("benchmark inputs: unsupported dtype ") + to_string(dtype));
  }
}

}  // namespace

std::vector<std::byte> random_normal(int64_t count, DType dtype, uint64_t seed) {
  if (dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f16) {
    throw Error(std::string("benchmark inputs: unsupported dtype ") + to_string(dtype) +
                ", expected f32, bf16 or f16");
  }
  std::vector<std::byte> data(static_cast<std::size_t>(count) * element_size(dtype));
  constexpr int64_t kChunk = 4096;  // even, so Box-Muller pairs never straddle chunks
  const int64_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    uint64_t state = seed * 0x2545f4914f6cdd1dull + static_cast<uint64_t>(c);
    splitmix64(state);
    const int64_t end = std::min(count, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; i += 2) {
      const double radius = std::sqrt(-2.0 * std::log(unit_interval(state)));
      const double angle = 2.0 * std::numbers::pi * unit_interval(state);
      store(data.data(), dtype, i, static_cast<float>(radius * std::cos(angle)));
      if (i + 1 < end)
        store(data.data(), dtype, i + 1, static_cast<float>(radius * std::sin(angle)));
    }
  }
  return data;
}

double load_as_double(const std::byte* data, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::f32: {
      float value;
      std::memcpy(&value, data + index * 4, 4);
      return value;
    }
    case DType::bf16: {
      uint16_t bits;
      std::memcpy(&bits, data + index * 2, 2);
      return bf16_to_float(bits);
    }
    case DType::f16: {
      uint16_t bits;
      std::memcpy(&bits, data + index * 2, 2);
      return f16_to_float(bits);
    }
    default: throw Error(std::string("benchmark: cannot read dtype ") + to_string(dtype));
  }
}

void load_as_double(const std::byte* data, DType dtype, int64_t index, int64_t count, double* out) {
  // One switch per row, not per element: the reference reads every key row of a head this way.
  switch (dtype) {
    case DType::f32: {
      const auto* values = reinterpret_cast<const float*>(data) + index;
      for (int64_t i = 0; i < count; ++i) out[i] = values[i];
      return;
    }
    case DType::bf16:
    case DType::f16: {
      const auto* bits = reinterpret_cast<const uint16_t*>(data) + index;
      for (int64_t i = 0; i < count; ++i)
        out[i] = dtype == DType::bf16 ? bf16_to_float(bits[i]) : f16_to_float(bits[i]);
      return;
    }
    default: throw Error(std::string("benchmark: cannot read dtype ") + to_string(dtype));
  }
}

std::vector<float> to_float32(const std::byte* data, DType dtype, int64_t count) {
  load_as_double(data, dtype, 0);  // throws for an unreadable dtype before the parallel loop
  std::vector<float> result(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i)
    result[i] = static_cast<float>(load_as_double(data, dtype, i));
  return result;
}

}  // namespace flashvision::tool
