// Float64 reference of attention forward and backward (tests only).
//
// Written for clarity, not speed: one query row at a time, scores materialized per row. Dense
// problems are described as varlen ones with equal lengths, so one code path serves both.
#pragma once

#include <cstdint>
#include <vector>

namespace flashvision::testing {

/// Logical inputs of one attention problem in float64; tensors are packed [rows, heads, dim].
struct RefProblem {
  int64_t heads = 1;                     ///< query heads H
  int64_t heads_kv = 1;                  ///< key/value heads Hkv (H % Hkv == 0)
  int64_t head_dim = 1;                  ///< D
  std::vector<int64_t> cu_seqlens_q{0};  ///< B + 1 non-decreasing row offsets into q
  std::vector<int64_t> cu_seqlens_k{0};  ///< B + 1 non-decreasing row offsets into k and v
  double softmax_scale = 0.0;            ///< 0 means 1/sqrt(D)
  bool causal = false;    ///< bottom-right aligned: row i sees keys j <= i + k_len - q_len
  std::vector<double> q;  ///< [total_q, H, D]
  std::vector<double> k;  ///< [total_k, Hkv, D]
  std::vector<double> v;  ///< [total_k, Hkv, D]

  /// Number of sequences B.
  int64_t batch() const { return static_cast<int64_t>(cu_seqlens_q.size()) - 1; }
  int64_t total_q() const { return cu_seqlens_q.back(); }
  int64_t total_k() const { return cu_seqlens_k.back(); }
  /// The scale actually applied to q k^T.
  double resolved_scale() const;
  /// Keys (a prefix of the sequence) that row `row` of a (q_len, k_len) sequence may see.
  int64_t visible_keys(int64_t row, int64_t q_len, int64_t k_len) const;
};

/// Reference forward results.
struct RefForward {
  std::vector<double> out;  ///< [total_q, H, D]; 0 for rows that see no key
  std::vector<double> lse;  ///< [H, total_q], natural log; -inf for rows that see no key
};

/// Reference gradients.
struct RefGrads {
  std::vector<double> dq;  ///< [total_q, H, D]
  std::vector<double> dk;  ///< [total_k, Hkv, D], summed over each query-head group
  std::vector<double> dv;  ///< [total_k, Hkv, D], summed over each query-head group
};

/// out = softmax(scale q k^T) v and its log-sum-exp, in float64.
RefForward reference_forward(const RefProblem& problem);

/// Gradients of sum(dout * out) with respect to q, k and v, given the reference forward results.
RefGrads reference_backward(const RefProblem& problem, const RefForward& forward,
                            const std::vector<double>& dout);

}  // namespace flashvision::testing
