// Float64 attention: forward with a per-row max-subtracted softmax, backward by the textbook
// formulas dS = P * (dP - rowsum(dO * O)).
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashvision::testing {
namespace {

/// Dot product with four partial sums, so the compiler can pipeline it without -ffast-math.
double dot(const double* a, const double* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

/// y += alpha * x
void axpy(double alpha, const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

/// Addresses of rows in the packed [rows, heads, dim] tensors of one (sequence, head) pair.
struct HeadView {
  const RefProblem& p;
  int64_t q_begin, k_begin, head, head_kv;

  int64_t q_index(int64_t row) const { return ((q_begin + row) * p.heads + head) * p.head_dim; }
  int64_t k_index(int64_t row) const {
    return ((k_begin + row) * p.heads_kv + head_kv) * p.head_dim;
  }
};

/// Scaled scores of query row `row` against the first `visible` keys.
void row_scores(const HeadView& hv, int64_t row, int64_t visible, double scale,
                std::vector<double>& scores) {
  const double* q = hv.p.q.data() + hv.q_index(row);
  for (int64_t j = 0; j < visible; ++j) {
    scores[j] = scale * dot(q, hv.p.k.data() + hv.k_index(j), hv.p.head_dim);
  }
}

template <typename Body>
void for_each_sequence_head(const RefProblem& p, Body&& body) {
  const int64_t group = p.heads / p.heads_kv;
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t q_len = p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b];
    const int64_t k_len = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
    for (int64_t h = 0; h < p.heads; ++h) {
      body(HeadView{p, p.cu_seqlens_q[b], p.cu_seqlens_k[b], h, h / group}, q_len, k_len);
    }
  }
}

}  // namespace

double RefProblem::resolved_scale() const {
  return softmax_scale != 0.0 ? softmax_scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

int64_t RefProblem::visible_keys(int64_t row, int64_t q_len, int64_t k_len) const {
  if (!causal) return k_len;
  return std::clamp<int64_t>(row + 1 + k_len - q_len, 0, k_len);
}

RefForward reference_forward(const RefProblem& p) {
  const int64_t dim = p.head_dim;
  RefForward result;
  result.out.assign(static_cast<size_t>(p.total_q() * p.heads * dim), 0.0);
  result.lse.assign(static_cast<size_t>(p.heads * p.total_q()),
                    -std::numeric_limits<double>::infinity());
  const double scale = p.resolved_scale();
  std::vector<double> scores;
  for_each_sequence_head(p, [&](const HeadView& hv, int64_t q_len, int64_t k_len) {
    scores.resize(static_cast<size_t>(k_len));
    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t visible = p.visible_keys(i, q_len, k_len);
      if (visible == 0) continue;  // out stays 0, lse stays -inf
      row_scores(hv, i, visible, scale, scores);
      const double row_max = *std::max_element(scores.begin(), scores.begin() + visible);
      double sum = 0.0;
      double* out = result.out.data() + hv.q_index(i);
      for (int64_t j = 0; j < visible; ++j) {
        const double weight = std::exp(scores[j] - row_max);
        sum += weight;
        axpy(weight, p.v.data() + hv.k_index(j), out, dim);
      }
      for (int64_t d = 0; d < dim; ++d) out[d] /= sum;
      result.lse[hv.head * p.total_q() + hv.q_begin + i] = row_max + std::log(sum);
    }
  });
  return result;
}

RefGrads reference_backward(const RefProblem& p, const RefForward& forward,
                            const std::vector<double>& dout) {
  const int64_t dim = p.head_dim;
  RefGrads grads;
  grads.dq.assign(p.q.size(), 0.0);
  grads.dk.assign(p.k.size(), 0.0);
  grads.dv.assign(p.v.size(), 0.0);
  const double scale = p.resolved_scale();
  std::vector<double> scores, prob_t, dscore_t;
  for_each_sequence_head(p, [&](const HeadView& hv, int64_t q_len, int64_t k_len) {
    // P and dS are kept transposed ([key][row]) so the dk/dv pass reads them contiguously and
    // accumulates one key row at a time instead of sweeping all of dk and dv for every query.
    scores.resize(static_cast<size_t>(k_len));
    prob_t.assign(static_cast<size_t>(k_len * q_len), 0.0);
    dscore_t.assign(static_cast<size_t>(k_len * q_len), 0.0);
    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t visible = p.visible_keys(i, q_len, k_len);
      if (visible == 0) continue;  // the row does not depend on any input
      row_scores(hv, i, visible, scale, scores);
      const double lse = forward.lse[hv.head * p.total_q() + hv.q_begin + i];
      const double* dout_row = dout.data() + hv.q_index(i);
      double* dq_row = grads.dq.data() + hv.q_index(i);
      const double delta = dot(dout_row, forward.out.data() + hv.q_index(i), dim);
      for (int64_t j = 0; j < visible; ++j) {
        const double prob = std::exp(scores[j] - lse);
        const double dprob = dot(dout_row, p.v.data() + hv.k_index(j), dim);
        const double dscore = prob * (dprob - delta);
        axpy(scale * dscore, p.k.data() + hv.k_index(j), dq_row, dim);
        prob_t[j * q_len + i] = prob;
        dscore_t[j * q_len + i] = dscore;
      }
    }
    for (int64_t j = 0; j < k_len; ++j) {
      double* dk_row = grads.dk.data() + hv.k_index(j);
      double* dv_row = grads.dv.data() + hv.k_index(j);
      for (int64_t i = 0; i < q_len; ++i) {
        const double prob = prob_t[j * q_len + i];
        if (prob == 0.0) continue;  // masked (or underflowed): contributes nothing
        axpy(scale * dscore_t[j * q_len + i], p.q.data() + hv.q_index(i), dk_row, dim);
        axpy(prob, dout.data() + hv.q_index(i), dv_row, dim);
      }
    }
  });
  return grads;
}

}  // namespace flashvision::testing
