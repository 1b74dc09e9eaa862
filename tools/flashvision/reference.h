// Float64 reference values on a sample of rows, recomputed directly from the (rounded) inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "bench_cases.h"
#include "flashvision/tensor.h"

namespace flashvision::tool {

/// Host-readable inputs of one case: q, dout [B, Nq, H, D] and k, v [B, Nk, H, D] in `dtype`.
struct ReferenceInputs {
  Shape shape;
  DType dtype = DType::f32;
  float scale = 0.0f;  ///< the exact float scale every implementation was given
  bool causal = false;
  const std::byte* q = nullptr;
  const std::byte* k = nullptr;
  const std::byte* v = nullptr;
  const std::byte* dout = nullptr;  ///< only needed for gradients
};

/// One row of one head: a query row (out, dq) or a key row (dk, dv).
struct RowIndex {
  int64_t batch = 0;
  int64_t head = 0;
  int64_t row = 0;
};

/// Reference rows of out (and dq) for sampled query rows; each vector holds rows.size() x D values.
struct QueryReference {
  std::vector<RowIndex> rows;
  std::vector<double> out;
  std::vector<double> dq;  ///< empty unless requested
};

/// Reference rows of dk and dv for sampled key rows of one head.
struct KeyReference {
  std::vector<RowIndex> rows;
  std::vector<double> dk;
  std::vector<double> dv;
};

/// `count` (b, h, row) triples with row < `rows`, always including the first row of the first
/// head and the last row of the last head; the rest drawn from `seed`.
std::vector<RowIndex> sample_rows(const Shape& shape, int64_t rows, int count, uint64_t seed);

/// out (and with `with_dq`, dq for dout) on the given query rows.
QueryReference query_reference(const ReferenceInputs& in, std::vector<RowIndex> rows, bool with_dq);

/// Multiply-adds key_reference() would spend on one head with `keys` sampled keys.
double key_reference_cost(const Shape& shape, int keys);

/// dk and dv on `keys` sampled key rows of head (B-1, H-1): needs every row's lse and
/// rowsum(dout * out) of that head, so it costs a full head of float64 work.
KeyReference key_reference(const ReferenceInputs& in, int keys, uint64_t seed);

/// Largest |actual - reference| over the rows, where `actual` is a [B, rows_per_seq, H, D]
/// tensor in `dtype`; NaN when any compared value is not finite.
double max_abs_error(const std::vector<double>& reference, const std::vector<RowIndex>& rows,
                     const std::byte* actual, DType dtype, const Shape& shape,
                     int64_t rows_per_seq);

}  // namespace flashvision::tool
