// Test tensors with arbitrary layouts, random inputs, poisoning and error metrics (tests only).
//
// A TestTensor is one argument of one flashvision call. It keeps a host image in the storage
// dtype, mirrors it on a Target, and knows the storage offset of every logical element in a
// canonical order (the packed order the float64 reference uses). Everything in the image that is
// not a logical element - padding between rows, guard elements before and after - holds a NaN
// poison pattern, so reading it contaminates results and writing it is detected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flashvision/flashvision.h"
#include "target.h"

namespace flashvision::testing {

/// Physical order of a [B, N, H, D] operand (the API shape is the same for both).
enum class Layout {
  flash,  ///< [B, N, H, D] storage: rows of all heads interleaved
  torch,  ///< [B, H, N, D] storage: each head's rows together (PyTorch SDPA layout)
};

/// Name of a layout ("flash", "torch").
const char* to_string(Layout layout);

/// One dimension of a view: its extent and element stride.
struct Dim {
  int64_t size = 0;
  int64_t stride = 0;
};

/// What a download found.
struct TensorRead {
  std::vector<double> values;  ///< logical elements in canonical order
  int64_t unwritten = 0;       ///< logical elements still holding the poison pattern
  int64_t stray_writes = 0;    ///< non-logical elements (padding, guards) that changed
};

/// One tensor argument: host image in the storage dtype, mirrored on a target.
class TestTensor {
 public:
  /// `dims` are the API dimensions (shape and strides as flashvision sees them); `canonical` lists
  /// API dimension indices from outermost to innermost in the reference's packed order.
  TestTensor(const Target& target, DType dtype, std::vector<Dim> dims, std::vector<int> canonical);

  /// The view handed to flashvision.
  TensorView view() const;
  /// Number of logical elements.
  int64_t size() const { return static_cast<int64_t>(offsets_.size()); }
  DType dtype() const { return dtype_; }

  /// Rounds `values` (canonical order) to the storage dtype, writes them with poisoned gaps and
  /// uploads; returns the stored values exactly (what the library will read).
  std::vector<double> store(const std::vector<double>& values);
  /// Fills the whole image, logical elements included, with the poison pattern and uploads it.
  void poison();
  /// Downloads and decodes the logical elements; checks gaps for stray writes.
  TensorRead read();

 private:
  DType dtype_;
  Device device_ = Device::cpu;  ///< the target's memory space, stamped on every view
  int device_index_ = 0;
  std::vector<Dim> dims_;
  std::vector<int64_t> offsets_;  ///< per logical element: its offset from view().data
  std::vector<bool> is_logical_;  ///< per element of the image: true for logical elements
  int64_t guard_ = 0;             ///< poisoned elements before the first and after the last one
  std::vector<std::byte> image_;
  std::unique_ptr<TargetBuffer> buffer_;
};

/// A q/k/v/out-like operand: dense [B, N, H, D] (batch > 0) or varlen [N, H, D] (batch == 0),
/// in `layout`, with `row_pad` extra elements after every row of the innermost row stride.
TestTensor make_operand(const Target& target, DType dtype, int64_t batch, int64_t rows,
                        int64_t heads, int64_t dim, Layout layout, int64_t row_pad);

/// A float32 lse: dense [B, H, N] (batch > 0) or varlen [H, N] (batch == 0); canonical order is
/// [H, B * N] like the reference. `row_pad` pads each head's run of rows.
TestTensor make_lse(const Target& target, int64_t batch, int64_t heads, int64_t rows,
                    int64_t row_pad);

/// An int32 [values.size()] tensor holding `values` (cu_seqlens).
TestTensor make_int32(const Target& target, const std::vector<int32_t>& values);

/// Seed for one test: FLASHVISION_TEST_SEED when set (to reproduce a failure), else random.
uint64_t test_seed();

/// `count` independent normal samples with the given standard deviation.
std::vector<double> random_normal(std::mt19937_64& rng, std::size_t count, double stddev = 1.0);

/// Value of `value` after rounding to `dtype` (f32, f16, bf16).
double round_to(DType dtype, double value);

/// Allowed error: |got - want| <= atol + rtol * max(scale_floor, max|want|) over the whole tensor.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  /// Lower bound of the scale rtol applies to, for results that cancel to much less than the
  /// terms they are summed from (their rounding error follows the terms, not the result).
  double scale_floor = 0.0;
};

/// Compares a download with the reference: every element written, no stray writes, infinities
/// exactly where the reference has them, all other values finite and within `tol`.
::testing::AssertionResult matches_reference(const std::string& name, const TensorRead& got,
                                             const std::vector<double>& want, Tolerance tol);

}  // namespace flashvision::testing

namespace flashvision {
/// Prints a dtype by name in gtest messages and ctest names (found by argument-dependent lookup).
void PrintTo(DType dtype, std::ostream* os);
}  // namespace flashvision
