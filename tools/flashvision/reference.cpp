// Reference rows in float64. Every value is recomputed from the inputs as stored (after rounding
// to the benchmark dtype), so the error measured is the implementation's own, not the inputs'.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "host_data.h"

namespace flashvision::tool {

namespace {

/// Reads [B, N, H, D] rows of one head as double.
class HeadRows {
 public:
  HeadRows(const ReferenceInputs& in, const std::byte* data, int64_t rows, int64_t batch,
           int64_t head)
      : data_(data),
        dtype_(in.dtype),
        dim_(in.shape.head_dim),
        base_((batch * rows * in.shape.heads + head) * in.shape.head_dim),
        stride_(in.shape.heads * dim_) {}

  /// Row `r` into `out` (dim values).
  void load(int64_t r, double* out) const {
    load_as_double(data_, dtype_, base_ + r * stride_, dim_, out);
  }

  std::vector<double> row(int64_t r) const {
    std::vector<double> values(dim_);
    load(r, values.data());
    return values;
  }

 private:
  const std::byte* data_;
  DType dtype_;
  int64_t dim_;
  int64_t base_;
  int64_t stride_;
};

/// Four partial sums: breaks the add latency chain without reordering beyond a fixed pattern.
double dot(const double* a, const double* b, int64_t n) {
  double sum[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int64_t lane = 0; lane < 4; ++lane) sum[lane] += a[i + lane] * b[i + lane];
  }
  for (; i < n; ++i) sum[0] += a[i] * b[i];
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return dot(a.data(), b.data(), static_cast<int64_t>(a.size()));
}

/// The first `rows` rows of one head of k or v as a dense rows x D double matrix: the softmax of
/// every query row reads all of them.
std::vector<double> dense_head(const HeadRows& head, int64_t rows, int64_t dim) {
  std::vector<double> values(static_cast<std::size_t>(rows * dim));
  for (int64_t r = 0; r < rows; ++r) head.load(r, values.data() + r * dim);
  return values;
}

int64_t visible_keys(const ReferenceInputs& in, int64_t row) {
  const int64_t nq = in.shape.seqlen_q, nk = in.shape.seqlen_k;
  return in.causal ? std::clamp<int64_t>(row + 1 + nk - nq, 0, nk) : nk;
}

/// Softmax statistics of one query row: probabilities p (normalized), lse, and the output row.
struct RowSoftmax {
  std::vector<double> p;
  std::vector<double> out;
  double lse = -std::numeric_limits<double>::infinity();
};

RowSoftmax row_softmax(const ReferenceInputs& in, const HeadRows& q,
                       const std::vector<double>& k_head, const std::vector<double>& v_head,
                       int64_t row) {
  const int64_t visible = visible_keys(in, row), dim = in.shape.head_dim;
  RowSoftmax result{std::vector<double>(visible), std::vector<double>(dim, 0.0)};
  if (visible == 0) return result;
  const std::vector<double> q_row = q.row(row);
  double row_max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    result.p[j] = static_cast<double>(in.scale) * dot(k_head.data() + j * dim, q_row.data(), dim);
    row_max = std::max(row_max, result.p[j]);
  }
  double sum = 0.0;
  for (double& p : result.p) sum += (p = std::exp(p - row_max));
  for (double& p : result.p) p /= sum;
  result.lse = row_max + std::log(sum);
  for (int64_t j = 0; j < visible; ++j) {
    for (int64_t d = 0; d < dim; ++d) result.out[d] += result.p[j] * v_head[j * dim + d];
  }
  return result;
}

}  // namespace

std::vector<RowIndex> sample_rows(const Shape& shape, int64_t rows, int count, uint64_t seed) {
  std::vector<RowIndex> sample = {{0, 0, 0}, {shape.batch - 1, shape.heads - 1, rows - 1}};
  std::mt19937_64 generator(seed);
  while (static_cast<int>(sample.size()) < count) {
    sample.push_back({static_cast<int64_t>(generator() % static_cast<uint64_t>(shape.batch)),
                      static_cast<int64_t>(generator() % static_cast<uint64_t>(shape.heads)),
                      static_cast<int64_t>(generator() % static_cast<uint64_t>(rows))});
  }
  return sample;
}

QueryReference query_reference(const ReferenceInputs& in, std::vector<RowIndex> rows,
                               bool with_dq) {
  const Shape& s = in.shape;
  const int64_t dim = s.head_dim, count = static_cast<int64_t>(rows.size());
  QueryReference ref{std::move(rows), std::vector<double>(count * dim), {}};
  if (with_dq) ref.dq.assign(count * dim, 0.0);
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < count; ++i) {
    const RowIndex& r = ref.rows[i];
    const HeadRows q(in, in.q, s.seqlen_q, r.batch, r.head);
    const std::vector<double> k_head =
        dense_head(HeadRows(in, in.k, s.seqlen_k, r.batch, r.head), s.seqlen_k, dim);
    const std::vector<double> v_head =
        dense_head(HeadRows(in, in.v, s.seqlen_k, r.batch, r.head), s.seqlen_k, dim);
    const RowSoftmax row = row_softmax(in, q, k_head, v_head, r.row);
    std::copy(row.out.begin(), row.out.end(), ref.out.begin() + i * dim);
    if (!with_dq) continue;
    const HeadRows dout(in, in.dout, s.seqlen_q, r.batch, r.head);
    const std::vector<double> dout_row = dout.row(r.row);
    double delta = 0.0;  // rowsum(dout * out)
    for (int64_t d = 0; d < dim; ++d) delta += dout_row[d] * row.out[d];
    for (int64_t j = 0; j < static_cast<int64_t>(row.p.size()); ++j) {
      const double ds = row.p[j] * (dot(v_head.data() + j * dim, dout_row.data(), dim) - delta);
      for (int64_t d = 0; d < dim; ++d)
        ref.dq[i * dim + d] += static_cast<double>(in.scale) * ds * k_head[j * dim + d];
    }
  }
  return ref;
}

double key_reference_cost(const Shape& s, int keys) {
  const double head = static_cast<double>(s.seqlen_q) * static_cast<double>(s.head_dim);
  return head * (2.0 * static_cast<double>(s.seqlen_k) + 3.0 * keys);
}

KeyReference key_reference(const ReferenceInputs& in, int keys, uint64_t seed) {
  const Shape& s = in.shape;
  const int64_t b = s.batch - 1, h = s.heads - 1, dim = s.head_dim, nq = s.seqlen_q;
  const HeadRows q(in, in.q, nq, b, h), dout(in, in.dout, nq, b, h);
  const std::vector<double> k_head =
      dense_head(HeadRows(in, in.k, s.seqlen_k, b, h), s.seqlen_k, dim);
  const std::vector<double> v_head =
      dense_head(HeadRows(in, in.v, s.seqlen_k, b, h), s.seqlen_k, dim);
  // Pass 1: lse and delta = rowsum(dout * out) of every query row of the head.
  std::vector<double> lse(nq), delta(nq);
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < nq; ++i) {
    const RowSoftmax row = row_softmax(in, q, k_head, v_head, i);
    lse[i] = row.lse;
    delta[i] = dot(dout.row(i), row.out);
  }
  // Pass 2: dv_j = sum_i p_ij dout_i and dk_j = scale * sum_i p_ij (dout_i . v_j - delta_i) q_i.
  std::vector<RowIndex> rows =
      sample_rows(Shape{1, 1, s.seqlen_q, s.seqlen_k, dim}, s.seqlen_k, keys, seed);
  for (RowIndex& r : rows) r = {b, h, r.row};
  const int64_t count = static_cast<int64_t>(rows.size());
  KeyReference ref{rows, std::vector<double>(count * dim, 0.0),
                   std::vector<double>(count * dim, 0.0)};
#pragma omp parallel for schedule(dynamic)
  for (int64_t t = 0; t < count; ++t) {
    const int64_t j = ref.rows[t].row;
    const double* k_row = k_head.data() + j * dim;
    const double* v_row = v_head.data() + j * dim;
    std::vector<double> q_row(dim), dout_row(dim);
    for (int64_t i = 0; i < nq; ++i) {
      if (j >= visible_keys(in, i)) continue;
      q.load(i, q_row.data());
      dout.load(i, dout_row.data());
      const double p =
          std::exp(static_cast<double>(in.scale) * dot(q_row.data(), k_row, dim) - lse[i]);
      const double ds = p * (dot(dout_row.data(), v_row, dim) - delta[i]);
      for (int64_t d = 0; d < dim; ++d) {
        ref.dv[t * dim + d] += p * dout_row[d];
        ref.dk[t * dim + d] += static_cast<double>(in.scale) * ds * q_row[d];
      }
    }
  }
  return ref;
}

double max_abs_error(const std::vector<double>& reference, const std::vector<RowIndex>& rows,
                     const std::byte* actual, DType dtype, const Shape& shape,
                     int64_t rows_per_seq) {
  const int64_t dim = shape.head_dim;
  double worst = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowIndex& r = rows[i];
    const int64_t base = ((r.batch * rows_per_seq + r.row) * shape.heads + r.head) * dim;
    for (int64_t d = 0; d < dim; ++d) {
      const double value = load_as_double(actual, dtype, base + d);
      if (!std::isfinite(value)) return std::numeric_limits<double>::quiet_NaN();
      worst = std::max(worst, std::abs(value - reference[i * dim + d]));
    }
  }
  return worst;
}

}  // namespace flashvision::tool
