// One attention call on a Target, checked against the float64 reference (tests only).
//
// AttentionCase says what to run; AttentionRun owns the tensors of one call and runs forward and
// backward; check_forward / check_backward draw fresh inputs, run, and assert every output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flashvision/flashvision.h"
#include "reference.h"
#include "target.h"
#include "test_support.h"

namespace flashvision::testing {

/// The shape and options of one attention problem.
struct AttentionCase {
  DType dtype = DType::f32;
  int64_t batch = 1;               ///< dense mode: sequences
  int64_t seqlen_q = 1;            ///< dense mode: Nq
  int64_t seqlen_k = 1;            ///< dense mode: Nk
  std::vector<int32_t> seqlens_q;  ///< varlen mode when non-empty: length of each query sequence
  std::vector<int32_t> seqlens_k;  ///< varlen mode: length of each key sequence (same count)
  int64_t heads = 1;
  int64_t heads_kv = 1;
  int64_t head_dim = 64;
  bool causal = false;
  float softmax_scale = 0.0f;  ///< 0 means 1/sqrt(D)
  Layout layout = Layout::flash;
  int64_t row_pad = 0;         ///< extra elements after each row (non-packed strides)
  bool with_lse = true;        ///< forward: ask for the lse (backward always needs it)
  int num_threads = 0;         ///< CPU backend threads (0: all)
  bool deterministic = false;  ///< backward: ask for bitwise reproducible gradients
  /// f8e4m3 inputs: the descale factors passed to the forward (the reference multiplies the stored
  /// values by them).
  float descale_q = 1.0f, descale_k = 1.0f, descale_v = 1.0f;

  bool varlen() const { return !seqlens_q.empty(); }
  /// dtype of out (and of the gradients): bf16 for f8e4m3 inputs, else the inputs'.
  DType out_dtype() const { return dtype == DType::f8e4m3 ? DType::bf16 : dtype; }
  /// One line for traces, e.g. "f32 B=2 H=2/1 D=64 Nq=197 Nk=197 causal torch pad=8".
  std::string describe() const;
};

/// Random inputs of one case (before rounding to the storage dtype).
struct CaseInputs {
  RefProblem problem;        ///< q, k, v, lengths and options
  std::vector<double> dout;  ///< [total_q, H, D]
};

/// Standard normal q, k, v and dout for `c`.
CaseInputs draw_inputs(const AttentionCase& c, std::mt19937_64& rng);

/// The tensors of one call on a target.
class AttentionRun {
 public:
  /// Allocates the tensors and stores the inputs (rounded to the case's dtype).
  AttentionRun(const Target& target, const AttentionCase& c, const CaseInputs& inputs);

  /// The inputs exactly as stored, for the reference.
  const RefProblem& problem() const { return problem_; }
  /// dout exactly as stored (valid after backward()).
  const std::vector<double>& dout() const { return dout_values_; }

  /// Poisons out and lse, then calls flashvision::forward (throws flashvision::Error).
  void forward();
  /// Poisons dq, dk, dv, then calls flashvision::backward with forward()'s out and lse (and the
  /// caller's workspace when one is given).
  void backward(void* workspace = nullptr, std::size_t workspace_bytes = 0);
  /// flashvision::backward_workspace_size of backward()'s arguments.
  std::size_t backward_workspace_bytes() { return backward_workspace_size(backward_args()); }
  /// The backend backward() would run (the target's, or its fallback where that one refuses).
  Backend selected_backward_backend();

  TensorRead read_out() { return out_.read(); }
  TensorRead read_lse() { return lse_.read(); }
  TensorRead read_dq() { return dq_->read(); }
  TensorRead read_dk() { return dk_->read(); }
  TensorRead read_dv() { return dv_->read(); }

 private:
  AttentionOptions options(Backend backend) const;
  /// backward()'s arguments (allocating dout and the gradients on first use).
  BackwardArgs backward_args();

  Target target_;
  AttentionCase case_;
  RefProblem problem_;
  std::vector<double> dout_source_;
  std::vector<double> dout_values_;
  TestTensor q_, k_, v_, out_, lse_;
  std::optional<TestTensor> cu_q_, cu_k_;
  std::optional<TestTensor> dout_, dq_, dk_, dv_;
};

/// A dense case of two sequences and two heads (as many kv heads): the tests' common small shape.
AttentionCase dense_case(DType dtype, int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim);

/// A varlen batch of four heads over two kv heads whose sequences give 64-row query tiles that are
/// several, partial, of one row, none, and exactly one, against keys of several blocks, of one,
/// a few, none and exactly 64.
AttentionCase ragged_varlen_case(DType dtype, int64_t head_dim);

/// Error allowed in out, dq, dk and dv for a storage dtype (relative to max|ref| of the tensor).
Tolerance output_tolerance(DType dtype);
/// Error allowed in the float32 lse when inputs have `dtype`.
Tolerance lse_tolerance(DType dtype);

/// Optional adjustments of a check.
struct CheckOptions {
  /// Reshapes the random inputs before they are stored (e.g. to make scores huge).
  std::function<void(RefProblem&)> shape_inputs;
  /// Replaces output_tolerance() for out, dq, dk and dv.
  std::optional<Tolerance> tolerance;
  /// check_backward: runs the backward in place of AttentionRun::backward() (e.g. with a caller
  /// workspace, or several times); the gradients it leaves are the ones checked.
  std::function<void(AttentionRun&)> run_backward;
};

/// Runs forward with fresh inputs on `target` and checks out (and lse) against the reference.
void check_forward(const Target& target, const AttentionCase& c, const CheckOptions& options = {});
/// Runs forward then backward with fresh inputs and checks out, lse, dq, dk, dv.
void check_backward(const Target& target, const AttentionCase& c, const CheckOptions& options = {});

/// A CheckOptions::run_backward that runs the backward twice and expects the second run's dq, dk
/// and dv to equal the first's bit for bit (deterministic mode).
void run_backward_twice_expect_identical(AttentionRun& run);

/// Runs the forward of `c` (with `backward`, the forward and then the backward) on `target` with
/// environment variable `name` set to `value`, and expects that call to throw an Error naming the
/// variable: the library's overrides must reject a bad value, not run with it.
void expect_env_value_rejected(const Target& target, const AttentionCase& c, const char* name,
                               const char* value, bool backward = false);

}  // namespace flashvision::testing
