// Runs one attention case on a target and compares every output with the float64 reference.
#include "attention_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "scoped_env.h"

namespace flashvision::testing {
namespace {

std::vector<int64_t> offsets_of(const std::vector<int32_t>& lengths) {
  std::vector<int64_t> offsets{0};
  for (int32_t len : lengths) offsets.push_back(offsets.back() + len);
  return offsets;
}

std::vector<int32_t> to_int32(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}

int32_t longest(const std::vector<int32_t>& lengths) {
  int32_t m = 0;
  for (int32_t len : lengths) m = std::max(m, len);
  return m;
}

/// Operand of `c` with `rows` rows per sequence (dense) or in total (varlen), of the inputs' dtype
/// or of `dtype`.
TestTensor operand_for(const Target& target, const AttentionCase& c, int64_t rows, int64_t heads,
                       std::optional<DType> dtype = std::nullopt) {
  return make_operand(target, dtype.value_or(c.dtype), c.varlen() ? 0 : c.batch, rows, heads,
                      c.head_dim, c.layout, c.row_pad);
}

/// Multiplies stored values by a descale factor (exact in double for e4m3 values and a float).
std::vector<double> descaled(std::vector<double> values, float descale) {
  for (double& x : values) x *= descale;
  return values;
}

int64_t rows_q(const AttentionCase& c) {
  return c.varlen() ? offsets_of(c.seqlens_q).back() : c.seqlen_q;
}
int64_t rows_k(const AttentionCase& c) {
  return c.varlen() ? offsets_of(c.seqlens_k).back() : c.seqlen_k;
}

/// Flags, per (row, head) of a packed [rows, heads, D] tensor, the vectors that must be exactly 0
/// because the mask hides them: query rows that see no key (out, dq) or, with `keys`, key rows
/// that no query sees (dk, dv).
std::vector<bool> masked_vectors(const RefProblem& p, bool keys) {
  const int64_t heads = keys ? p.heads_kv : p.heads;
  std::vector<bool> masked(static_cast<std::size_t>((keys ? p.total_k() : p.total_q()) * heads));
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t q_len = p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b];
    const int64_t k_len = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
    const int64_t begin = keys ? p.cu_seqlens_k[b] : p.cu_seqlens_q[b];
    const int64_t rows = keys ? k_len : q_len;
    // The last query row sees the most keys, so it decides which keys are seen at all.
    const int64_t seen_keys = q_len == 0 ? 0 : p.visible_keys(q_len - 1, q_len, k_len);
    for (int64_t r = 0; r < rows; ++r) {
      const bool hidden = keys ? r >= seen_keys : p.visible_keys(r, q_len, k_len) == 0;
      for (int64_t h = 0; h < heads; ++h) {
        masked[static_cast<std::size_t>((begin + r) * heads + h)] = hidden;
      }
    }
  }
  return masked;
}

/// Asserts that masked vectors hold exact zeros (a tolerance would hide a tiny garbage value).
void expect_masked_zero(const std::string& name, const TensorRead& got, const RefProblem& p,
                        bool keys) {
  const std::vector<bool> masked = masked_vectors(p, keys);
  const auto dim = static_cast<std::size_t>(p.head_dim);
  int64_t nonzero = 0;
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    if (masked[i / dim] && got.values[i] != 0.0) ++nonzero;
  }
  EXPECT_EQ(nonzero, 0) << name << ": elements of fully masked rows that are not exactly 0";
}

}  // namespace

std::string AttentionCase::describe() const {
  std::ostringstream s;
  s << to_string(dtype) << " H=" << heads << "/" << heads_kv << " D=" << head_dim;
  if (varlen()) {
    s << " varlen q=[";
    for (std::size_t i = 0; i < seqlens_q.size(); ++i) s << (i ? "," : "") << seqlens_q[i];
    s << "] k=[";
    for (std::size_t i = 0; i < seqlens_k.size(); ++i) s << (i ? "," : "") << seqlens_k[i];
    s << "]";
  } else {
    s << " B=" << batch << " Nq=" << seqlen_q << " Nk=" << seqlen_k;
  }
  s << (causal ? " causal" : "") << " " << to_string(layout);
  if (row_pad) s << " pad=" << row_pad;
  if (softmax_scale != 0.0f) s << " scale=" << softmax_scale;
  if (!with_lse) s << " no-lse";
  if (num_threads) s << " threads=" << num_threads;
  if (deterministic) s << " deterministic";
  if (descale_q != 1.0f || descale_k != 1.0f || descale_v != 1.0f) {
    s << " descale=" << descale_q << "," << descale_k << "," << descale_v;
  }
  return s.str();
}

CaseInputs draw_inputs(const AttentionCase& c, std::mt19937_64& rng) {
  CaseInputs in;
  RefProblem& p = in.problem;
  p.heads = c.heads;
  p.heads_kv = c.heads_kv;
  p.head_dim = c.head_dim;
  p.causal = c.causal;
  p.softmax_scale = c.softmax_scale;
  if (c.varlen()) {
    p.cu_seqlens_q = offsets_of(c.seqlens_q);
    p.cu_seqlens_k = offsets_of(c.seqlens_k);
  } else {
    p.cu_seqlens_q = offsets_of(std::vector<int32_t>(c.batch, static_cast<int32_t>(c.seqlen_q)));
    p.cu_seqlens_k = offsets_of(std::vector<int32_t>(c.batch, static_cast<int32_t>(c.seqlen_k)));
  }
  const auto q_size = static_cast<std::size_t>(p.total_q() * c.heads * c.head_dim);
  const auto k_size = static_cast<std::size_t>(p.total_k() * c.heads_kv * c.head_dim);
  p.q = random_normal(rng, q_size);
  p.k = random_normal(rng, k_size);
  p.v = random_normal(rng, k_size);
  in.dout = random_normal(rng, q_size);
  return in;
}

AttentionRun::AttentionRun(const Target& target, const AttentionCase& c, const CaseInputs& inputs)
    : target_(target),
      case_(c),
      problem_(inputs.problem),
      dout_source_(inputs.dout),
      q_(operand_for(target, c, rows_q(c), c.heads)),
      k_(operand_for(target, c, rows_k(c), c.heads_kv)),
      v_(operand_for(target, c, rows_k(c), c.heads_kv)),
      out_(operand_for(target, c, rows_q(c), c.heads, c.out_dtype())),
      lse_(make_lse(target, c.varlen() ? 0 : c.batch, c.heads, rows_q(c), c.row_pad)) {
  problem_.q = descaled(q_.store(problem_.q), c.descale_q);
  problem_.k = descaled(k_.store(problem_.k), c.descale_k);
  problem_.v = descaled(v_.store(problem_.v), c.descale_v);
  if (c.varlen()) {
    cu_q_.emplace(make_int32(target, to_int32(problem_.cu_seqlens_q)));
    cu_k_.emplace(make_int32(target, to_int32(problem_.cu_seqlens_k)));
  }
}

AttentionOptions AttentionRun::options(Backend backend) const {
  AttentionOptions o;
  o.softmax_scale = case_.softmax_scale;
  o.causal = case_.causal;
  o.backend = backend;
  o.num_threads = case_.num_threads;
  if (case_.varlen()) {
    o.cu_seqlens_q = cu_q_->view();
    o.cu_seqlens_k = cu_k_->view();
    // The CPU backend computes the longest lengths itself; GPUs cannot read cu_seqlens on the host.
    if (target_.device != Device::cpu) {
      o.max_seqlen_q = longest(case_.seqlens_q);
      o.max_seqlen_k = longest(case_.seqlens_k);
    }
  }
  return o;
}

void AttentionRun::forward() {
  ForwardArgs args;
  static_cast<AttentionOptions&>(args) = options(target_.backend);
  args.q = q_.view();
  args.k = k_.view();
  args.v = v_.view();
  args.descale_q = case_.descale_q;
  args.descale_k = case_.descale_k;
  args.descale_v = case_.descale_v;
  out_.poison();
  args.out = out_.view();
  lse_.poison();
  if (case_.with_lse) args.lse = lse_.view();
  flashvision::forward(args);
}

BackwardArgs AttentionRun::backward_args() {
  if (!case_.with_lse) throw std::logic_error("AttentionRun::backward needs a case with_lse");
  if (!dout_) {
    const int64_t q_rows = rows_q(case_), k_rows = rows_k(case_);
    dout_.emplace(operand_for(target_, case_, q_rows, case_.heads));
    dout_values_ = dout_->store(dout_source_);
    dq_.emplace(operand_for(target_, case_, q_rows, case_.heads));
    dk_.emplace(operand_for(target_, case_, k_rows, case_.heads_kv));
    dv_.emplace(operand_for(target_, case_, k_rows, case_.heads_kv));
  }
  BackwardArgs args;
  static_cast<AttentionOptions&>(args) = options(target_.backward_backend);
  args.deterministic = case_.deterministic;
  args.q = q_.view();
  args.k = k_.view();
  args.v = v_.view();
  args.out = out_.view();
  args.lse = lse_.view();
  args.dout = dout_->view();
  args.dq = dq_->view();
  args.dk = dk_->view();
  args.dv = dv_->view();
  if (target_.backward_fallback) {
    try {
      selected_backend(args);
    } catch (const Error&) {
      args.backend = *target_.backward_fallback;
    }
  }
  return args;
}

Backend AttentionRun::selected_backward_backend() { return selected_backend(backward_args()); }

void AttentionRun::backward(void* workspace, std::size_t workspace_bytes) {
  BackwardArgs args = backward_args();
  args.workspace = workspace;
  args.workspace_bytes = workspace_bytes;
  dq_->poison();
  dk_->poison();
  dv_->poison();
  flashvision::backward(args);
}

AttentionCase dense_case(DType dtype, int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.batch = 2;
  c.seqlen_q = seqlen_q;
  c.seqlen_k = seqlen_k;
  c.heads = c.heads_kv = 2;
  c.head_dim = head_dim;
  return c;
}

AttentionCase ragged_varlen_case(DType dtype, int64_t head_dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.seqlens_q = {300, 1, 0, 65, 64};
  c.seqlens_k = {600, 200, 5, 0, 64};
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = head_dim;
  return c;
}

Tolerance output_tolerance(DType dtype) {
  switch (dtype) {
    // e4m3 probabilities carry 3 mantissa bits: each is off by up to 2^-4 of itself, which a
    // row that a few keys dominate passes on to O (5 % seen on the H200). The errors follow the
    // terms p |v| (about 0.8 for normal V), not O, which long random rows average down (max|O|
    // 0.29 over 1000 keys): hence the floor.
    case DType::f8e4m3: return {1e-3, 6.25e-2, 0.5};
    case DType::bf16: return {1e-3, 2e-2};
    case DType::f16: return {2e-4, 5e-3};
    default: return {1e-6, 2e-5};
  }
}

Tolerance lse_tolerance(DType dtype) {
  // Low-precision inputs are exact in float32, so the lse sees float32 arithmetic in every case;
  // the margin for f16/bf16 leaves room for kernels that round P before summing it.
  // e4m3 scores come from the tensor cores' FP8 products, whose sums keep fewer bits than float32.
  if (dtype == DType::f8e4m3) return {1e-4, 1e-3};
  return dtype == DType::f32 ? Tolerance{1e-6, 2e-5} : Tolerance{1e-5, 1e-4};
}

namespace {

/// Seeds, draws and stores the inputs of one check; the trace names the seed to reproduce it.
struct PreparedCheck {
  uint64_t seed;
  std::unique_ptr<AttentionRun> run;
};

PreparedCheck prepare(const Target& target, const AttentionCase& c, const CheckOptions& options) {
  PreparedCheck prepared{test_seed(), nullptr};
  std::mt19937_64 rng(prepared.seed);
  CaseInputs inputs = draw_inputs(c, rng);
  if (options.shape_inputs) options.shape_inputs(inputs.problem);
  prepared.run = std::make_unique<AttentionRun>(target, c, inputs);
  return prepared;
}

std::string trace(const Target& target, const AttentionCase& c, uint64_t seed) {
  return target.name + " " + c.describe() + " seed=" + std::to_string(seed) +
         " (rerun with FLASHVISION_TEST_SEED=" + std::to_string(seed) + ")";
}

/// Checks out and lse of a run that has called forward().
void expect_forward_matches(AttentionRun& run, const AttentionCase& c,
                            const CheckOptions& options) {
  const RefForward ref = reference_forward(run.problem());
  const Tolerance tol = options.tolerance.value_or(output_tolerance(c.dtype));
  const TensorRead out = run.read_out();
  EXPECT_TRUE(matches_reference("out", out, ref.out, tol));
  expect_masked_zero("out", out, run.problem(), false);
  const TensorRead lse = run.read_lse();
  if (c.with_lse) {
    EXPECT_TRUE(matches_reference("lse", lse, ref.lse, lse_tolerance(c.dtype)));
  } else {
    EXPECT_EQ(lse.unwritten, static_cast<int64_t>(lse.values.size()))
        << "lse was not requested but was written";
  }
}

/// Fails the test with the library's message, or skips it when the build simply lacks the kernel
/// (a CUDA build restricted with FLASHVISION_HEAD_DIMS): that is a build choice, not a defect.
void report_error(const char* what, const Error& e) {
  const std::string message = e.what();
  if (message.find("which this build did not compile") != std::string::npos) {
    GTEST_SKIP() << message;
  }
  ADD_FAILURE() << what << " threw: " << message;
}

}  // namespace

void check_forward(const Target& target, const AttentionCase& c, const CheckOptions& options) {
  PreparedCheck prepared = prepare(target, c, options);
  SCOPED_TRACE(trace(target, c, prepared.seed));
  try {
    prepared.run->forward();
  } catch (const Error& e) {
    report_error("forward", e);
    return;
  }
  expect_forward_matches(*prepared.run, c, options);
}

void check_backward(const Target& target, const AttentionCase& c, const CheckOptions& options) {
  PreparedCheck prepared = prepare(target, c, options);
  SCOPED_TRACE(trace(target, c, prepared.seed));
  AttentionRun& run = *prepared.run;
  try {
    run.forward();
    if (options.run_backward) {
      options.run_backward(run);
    } else {
      run.backward();
    }
  } catch (const Error& e) {
    report_error("forward/backward", e);
    return;
  }
  expect_forward_matches(run, c, options);
  // out and lse are inputs of backward, so the reference takes them exactly as stored: their
  // rounding (out to f16/bf16, lse to float32) then affects both sides alike. With scores of order
  // 1e4 a float32 lse is off by ~1e-3 (its ulp), a relative error that every recomputed
  // probability inherits; and rowsum(dout * out) from a rounded out is what the library must use.
  // The forward errors themselves are checked just above.
  const RefForward stored{run.read_out().values, run.read_lse().values};
  const RefGrads grads = reference_backward(run.problem(), stored, run.dout());
  const Tolerance tol = options.tolerance.value_or(output_tolerance(c.dtype));
  // dq and dk are sums of p * (dp - rowsum(dout * out)) terms that cancel: exactly when a row sees
  // a single key (all of a 1x1 problem), nearly when P is one-hot. Their float32 error follows the
  // terms, which are of order 1 for unit inputs, so the relative bound never shrinks below that.
  Tolerance qk_tol = tol;
  qk_tol.scale_floor = std::max(tol.scale_floor, 1.0);
  const TensorRead dq = run.read_dq(), dk = run.read_dk(), dv = run.read_dv();
  EXPECT_TRUE(matches_reference("dq", dq, grads.dq, qk_tol));
  EXPECT_TRUE(matches_reference("dk", dk, grads.dk, qk_tol));
  EXPECT_TRUE(matches_reference("dv", dv, grads.dv, tol));
  expect_masked_zero("dq", dq, run.problem(), false);
  expect_masked_zero("dk", dk, run.problem(), true);
  expect_masked_zero("dv", dv, run.problem(), true);
}

void run_backward_twice_expect_identical(AttentionRun& run) {
  run.backward();
  const TensorRead dq = run.read_dq(), dk = run.read_dk(), dv = run.read_dv();
  run.backward();
  EXPECT_EQ(dq.values, run.read_dq().values) << "dq not bitwise reproducible";
  EXPECT_EQ(dk.values, run.read_dk().values) << "dk not bitwise reproducible";
  EXPECT_EQ(dv.values, run.read_dv().values) << "dv not bitwise reproducible";
}

void expect_env_value_rejected(const Target& target, const AttentionCase& c, const char* name,
                               const char* value, bool backward) {
  ScopedEnv env(name, value);
  std::mt19937_64 rng(test_seed());
  AttentionRun run(target, c, draw_inputs(c, rng));
  if (backward) run.forward();
  try {
    if (backward) {
      run.backward();
    } else {
      run.forward();
    }
    ADD_FAILURE() << "the " << (backward ? "backward" : "forward") << " ran with " << name << "="
                  << value;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

}  // namespace flashvision::testing
