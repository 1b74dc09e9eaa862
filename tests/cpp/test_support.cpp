// Test tensors, random inputs and comparisons.
#include "test_support.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "float_formats.h"

namespace flashvision::testing {
namespace {

/// Poisoned elements on each side of a tensor, to catch writes just outside it.
constexpr int64_t kGuardElements = 64;

// NaN patterns with an unusual payload: a kernel that copies them unchanged is told apart from
// one that computed a NaN (both fail, but the message differs).
constexpr uint32_t kPoisonF32 = 0x7fbadbadu;
constexpr uint16_t kPoisonF16 = 0x7dadu;
constexpr uint16_t kPoisonBf16 = 0x7fadu;
constexpr uint32_t kPoisonI32 = 0x7fbadbadu;
constexpr uint8_t kPoisonE4m3 = 0x7fu;  // e4m3's only NaN pattern (with either sign)

void encode(DType dtype, double value, std::byte* dst) {
  switch (dtype) {
    case DType::f32: {
      const float f = static_cast<float>(value);
      std::memcpy(dst, &f, 4);
      return;
    }
    case DType::f16: {
      // double -> float -> f16 may round twice; harmless, the stored value is read back exactly.
      const uint16_t bits = float_to_f16_bits(static_cast<float>(value));
      std::memcpy(dst, &bits, 2);
      return;
    }
    case DType::bf16: {
      const uint16_t bits = float_to_bf16_bits(static_cast<float>(value));
      std::memcpy(dst, &bits, 2);
      return;
    }
    case DType::i32: {
      const auto i = static_cast<int32_t>(value);
      std::memcpy(dst, &i, 4);
      return;
    }
    case DType::f8e4m3: {
      const uint8_t bits = float_to_e4m3_bits(static_cast<float>(value));
      std::memcpy(dst, &bits, 1);
      return;
    }
  }
  throw std::logic_error("test tensors do not support this dtype");
}

double decode(DType dtype, const std::byte* src) {
  switch (dtype) {
    case DType::f32: {
      float f = 0;
      std::memcpy(&f, src, 4);
      return f;
    }
    case DType::f16: {
      uint16_t bits = 0;
      std::memcpy(&bits, src, 2);
      return f16_bits_to_float(bits);
    }
    case DType::bf16: {
      uint16_t bits = 0;
      std::memcpy(&bits, src, 2);
      return bf16_bits_to_float(bits);
    }
    case DType::i32: {
      int32_t i = 0;
      std::memcpy(&i, src, 4);
      return i;
    }
    case DType::f8e4m3: {
      uint8_t bits = 0;
      std::memcpy(&bits, src, 1);
      return e4m3_bits_to_float(bits);
    }
  }
  throw std::logic_error("test tensors do not support this dtype");
}

void write_poison(DType dtype, std::byte* dst) {
  switch (dtype) {
    case DType::f32: std::memcpy(dst, &kPoisonF32, 4); return;
    case DType::f16: std::memcpy(dst, &kPoisonF16, 2); return;
    case DType::bf16: std::memcpy(dst, &kPoisonBf16, 2); return;
    case DType::i32: std::memcpy(dst, &kPoisonI32, 4); return;
    case DType::f8e4m3: std::memcpy(dst, &kPoisonE4m3, 1); return;
  }
  throw std::logic_error("test tensors do not support this dtype");
}

bool is_poison(DType dtype, const std::byte* src) {
  std::byte expected[4];
  write_poison(dtype, expected);
  return std::memcmp(src, expected, element_size(dtype)) == 0;
}

}  // namespace

const char* to_string(Layout layout) { return layout == Layout::flash ? "flash" : "torch"; }

TestTensor::TestTensor(const Target& target, DType dtype, std::vector<Dim> dims,
                       std::vector<int> canonical)
    : dtype_(dtype),
      device_(target.device),
      device_index_(target.device_index),
      dims_(std::move(dims)),
      guard_(kGuardElements) {
  int64_t count = 1, span = 1;
  for (const Dim& d : dims_) {
    count *= d.size;
    span += d.size > 0 ? (d.size - 1) * d.stride : 0;
  }
  if (count == 0) span = 0;
  offsets_.reserve(static_cast<std::size_t>(count));
  is_logical_.assign(static_cast<std::size_t>(span + 2 * guard_), false);
  // Walk the canonical order with an odometer over the permuted dimensions.
  std::vector<int64_t> index(canonical.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (std::size_t i = 0; i < canonical.size(); ++i) {
      offset += index[i] * dims_[canonical[i]].stride;
    }
    offsets_.push_back(offset);
    is_logical_[static_cast<std::size_t>(offset + guard_)] = true;
    for (int i = static_cast<int>(canonical.size()) - 1; i >= 0; --i) {
      if (++index[i] < dims_[canonical[i]].size) break;
      index[i] = 0;
    }
  }
  const std::size_t elem = element_size(dtype_);
  image_.resize(is_logical_.size() * elem);
  buffer_ = target.allocate(image_.size());
}

TensorView TestTensor::view() const {
  TensorView v;
  v.data = static_cast<std::byte*>(buffer_->data()) + guard_ * element_size(dtype_);
  v.dtype = dtype_;
  v.device = device_;
  v.device_index = device_index_;
  v.rank = static_cast<int>(dims_.size());
  for (int i = 0; i < v.rank; ++i) {
    v.shape[i] = dims_[i].size;
    v.stride[i] = dims_[i].stride;
  }
  return v;
}

std::vector<double> TestTensor::store(const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != size()) {
    throw std::logic_error("TestTensor::store got " + std::to_string(values.size()) +
                           " values for " + std::to_string(size()) + " elements");
  }
  const std::size_t elem = element_size(dtype_);
  for (std::size_t i = 0; i < is_logical_.size(); ++i) write_poison(dtype_, &image_[i * elem]);
  std::vector<double> stored(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* dst = &image_[static_cast<std::size_t>(offsets_[i] + guard_) * elem];
    encode(dtype_, values[i], dst);
    stored[i] = decode(dtype_, dst);
  }
  buffer_->upload(image_.data(), image_.size());
  return stored;
}

void TestTensor::poison() {
  const std::size_t elem = element_size(dtype_);
  for (std::size_t i = 0; i < is_logical_.size(); ++i) write_poison(dtype_, &image_[i * elem]);
  buffer_->upload(image_.data(), image_.size());
}

TensorRead TestTensor::read() {
  buffer_->download(image_.data(), image_.size());
  const std::size_t elem = element_size(dtype_);
  TensorRead result;
  result.values.resize(offsets_.size());
  for (std::size_t i = 0; i < offsets_.size(); ++i) {
    const std::byte* src = &image_[static_cast<std::size_t>(offsets_[i] + guard_) * elem];
    result.values[i] = decode(dtype_, src);
    if (is_poison(dtype_, src)) ++result.unwritten;
  }
  // Gaps were poisoned by store() or poison(); any other content there is a stray write.
  for (std::size_t i = 0; i < is_logical_.size(); ++i) {
    if (!is_logical_[i] && !is_poison(dtype_, &image_[i * elem])) ++result.stray_writes;
  }
  return result;
}

TestTensor make_operand(const Target& target, DType dtype, int64_t batch, int64_t rows,
                        int64_t heads, int64_t dim, Layout layout, int64_t row_pad) {
  const bool flash = layout == Layout::flash;
  // The innermost run of rows gets the padding: a row of all heads (flash) or of one head (torch).
  const int64_t row_stride = (flash ? heads * dim : dim) + row_pad;
  const int64_t head_stride = flash ? dim : rows * row_stride;
  const int64_t seq_stride = flash ? rows * row_stride : heads * head_stride;
  if (batch == 0) {
    return TestTensor(target, dtype, {{rows, row_stride}, {heads, head_stride}, {dim, 1}},
                      {0, 1, 2});
  }
  return TestTensor(target, dtype,
                    {{batch, seq_stride}, {rows, row_stride}, {heads, head_stride}, {dim, 1}},
                    {0, 1, 2, 3});
}

TestTensor make_lse(const Target& target, int64_t batch, int64_t heads, int64_t rows,
                    int64_t row_pad) {
  const int64_t head_stride = rows + row_pad;
  if (batch == 0) return TestTensor(target, DType::f32, {{heads, head_stride}, {rows, 1}}, {0, 1});
  return TestTensor(target, DType::f32,
                    {{batch, heads * head_stride}, {heads, head_stride}, {rows, 1}}, {1, 0, 2});
}

TestTensor make_int32(const Target& target, const std::vector<int32_t>& values) {
  TestTensor t(target, DType::i32, {{static_cast<int64_t>(values.size()), 1}}, {0});
  t.store(std::vector<double>(values.begin(), values.end()));
  return t;
}

uint64_t test_seed() {
  if (const char* fixed = std::getenv("FLASHVISION_TEST_SEED")) {
    return std::strtoull(fixed, nullptr, 0);
  }
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::vector<double> random_normal(std::mt19937_64& rng, std::size_t count, double stddev) {
  std::normal_distribution<double> normal(0.0, stddev);
  std::vector<double> values(count);
  for (double& v : values) v = normal(rng);
  return values;
}

double round_to(DType dtype, double value) {
  std::byte storage[4];
  encode(dtype, value, storage);
  return decode(dtype, storage);
}

::testing::AssertionResult matches_reference(const std::string& name, const TensorRead& got,
                                             const std::vector<double>& want, Tolerance tol) {
  if (got.values.size() != want.size()) {
    return ::testing::AssertionFailure()
           << name << ": " << got.values.size() << " elements, reference has " << want.size();
  }
  if (got.unwritten > 0 || got.stray_writes > 0) {
    return ::testing::AssertionFailure() << name << ": " << got.unwritten << " of " << want.size()
                                         << " elements never written (still poison), "
                                         << got.stray_writes << " writes outside the tensor";
  }
  double max_err = 0.0, scale = 0.0;
  std::size_t worst = 0, bad_special = 0, first_bad_special = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = got.values[i], w = want[i];
    if (std::isinf(w) || !std::isfinite(g)) {
      if (g != w && bad_special++ == 0) first_bad_special = i;
      continue;
    }
    scale = std::max(scale, std::abs(w));
    if (std::abs(g - w) > max_err) {
      max_err = std::abs(g - w);
      worst = i;
    }
  }
  if (bad_special > 0) {
    return ::testing::AssertionFailure()
           << name << ": " << bad_special << " elements non-finite or not matching an infinite "
           << "reference; first at " << first_bad_special << ": got "
           << got.values[first_bad_special] << ", want " << want[first_bad_special];
  }
  const double bound = tol.atol + tol.rtol * std::max(scale, tol.scale_floor);
  std::ostringstream summary;
  summary << name << ": max abs err " << max_err << " at element " << worst << " (got "
          << (want.empty() ? 0.0 : got.values[worst]) << ", want "
          << (want.empty() ? 0.0 : want[worst]) << "), bound " << bound << " = " << tol.atol
          << " + " << tol.rtol << " * max(max|ref| " << scale << ", floor " << tol.scale_floor
          << ")";
  if (max_err <= bound) {
    // FLASHVISION_TEST_VERBOSE=1 prints passing comparisons too, to calibrate tolerances.
    if (std::getenv("FLASHVISION_TEST_VERBOSE")) std::printf("  %s\n", summary.str().c_str());
    return ::testing::AssertionSuccess() << summary.str();
  }
  return ::testing::AssertionFailure() << summary.str();
}

}  // namespace flashvision::testing

namespace flashvision {
void PrintTo(DType dtype, std::ostream* os) { *os << to_string(dtype); }
}  // namespace flashvision
