#include "bench_runner.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <new>
#include <string>

#include "flashvision/flashvision.h"
#include "host_data.h"
#include "reference.h"

namespace flashvision::tool {

namespace {

constexpr int kSampledRows = 32;                 // (b, h, row) triples checked for out and dq
constexpr int kSampledKeys = 8;                  // key rows checked for dk and dv
constexpr double kMaxKeyReferenceCost = 0x1p33;  // multiply-adds: a few seconds of float64 work
constexpr double kBackwardFlopFactor = 3.5;      // fwd+bwd = forward + 2.5 x forward (BENCH.md)

std::string format_mb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", static_cast<double>(bytes) / (1 << 20));
  return text;
}

void append_note(std::string& note, const std::string& text) {
  note += (note.empty() ? "" : "; ") + text;
}

/// "[3/12] name". Appends rather than chaining operator+ on a literal, which trips GCC 12's
/// -Wrestrict false positive (GCC bug 105329).
std::string progress_label(CaseProgress progress, const std::string& name) {
  std::string label = "[";
  label += std::to_string(progress.index);
  label += '/';
  label += std::to_string(progress.total);
  label += "] ";
  label += name;
  return label;
}

/// FNV-1a: a hash that is the same with every standard library, so a seed names the same inputs.
uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

/// The text of a failure as the record's "error".
std::string describe(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return std::string("out of memory (") + e.what() + ")";
  return e.what();
}

/// The device buffers of one case; the flashvision operands keep the benchmark dtype.
struct Operands {
  DeviceBuffer q, k, v, dout, out, lse, dq, dk, dv;
};

class CaseRunner {
 public:
  CaseRunner(const BenchCase& bench_case, const RunSettings& settings, BenchDevice& device,
             CaseProgress progress)
      : case_(bench_case),
        shape_(bench_case.shape),
        settings_(settings),
        device_(device),
        label_(progress_label(progress, bench_case.name)),
        scale_(1.0f / std::sqrt(static_cast<float>(shape_.head_dim))) {}

  std::vector<BenchRecord> run() {
    std::fprintf(stderr, "%s %s %s%s\n", label_.c_str(), format_shape(shape_).c_str(),
                 to_string(settings_.dtype), times_backward() ? " fwd, fwd+bwd" : " fwd");
    std::fflush(stderr);
    try {
      prepare_inputs();
      compute_references();
    } catch (const std::exception& e) {
      record_setup_failure("inputs: " + describe(e));
      return std::move(records_);
    }
    run_flashvision();
    if (settings_.naive) run_naive();
    return std::move(records_);
  }

 private:
  int64_t q_elements() const {
    return shape_.batch * shape_.seqlen_q * shape_.heads * shape_.head_dim;
  }
  int64_t k_elements() const {
    return shape_.batch * shape_.seqlen_k * shape_.heads * shape_.head_dim;
  }
  std::size_t bytes_of(int64_t elements, DType dtype) const {
    return static_cast<std::size_t>(elements) * element_size(dtype);
  }

  DeviceBuffer upload_random(int64_t elements, uint64_t stream) {
    // Each tensor of each case draws its own stream, so cases get fresh inputs.
    const uint64_t seed = settings_.seed ^ (fnv1a(case_.name + format_shape(shape_)) + stream);
    const std::vector<std::byte> host = random_normal(elements, settings_.dtype, seed);
    DeviceBuffer buffer = device_.allocate(host.size());
    device_.upload(buffer, host.data(), host.size());
    return buffer;
  }

  DeviceBuffer poisoned(std::size_t bytes) {
    DeviceBuffer buffer = device_.allocate(bytes);
    device_.fill_bytes(buffer, 0xff);  // NaN in every float dtype: unwritten outputs show up
    return buffer;
  }

  void prepare_inputs() {
    const DType dt = settings_.dtype;
    ops_.q = upload_random(q_elements(), 1);
    ops_.k = upload_random(k_elements(), 2);
    ops_.v = upload_random(k_elements(), 3);
    ops_.out = poisoned(bytes_of(q_elements(), dt));
    ops_.lse = poisoned(bytes_of(shape_.batch * shape_.heads * shape_.seqlen_q, DType::f32));
    if (!times_backward()) return;
    ops_.dout = upload_random(q_elements(), 4);
    ops_.dq = poisoned(bytes_of(q_elements(), dt));
    ops_.dk = poisoned(bytes_of(k_elements(), dt));
    ops_.dv = poisoned(bytes_of(k_elements(), dt));
  }

  const std::byte* host_bytes(const DeviceBuffer& buffer, std::vector<std::byte>& scratch) {
    return device_.host_readable(buffer, scratch);
  }

  void compute_references() {
    ReferenceInputs in{shape_,
                       settings_.dtype,
                       scale_,
                       settings_.causal,
                       host_bytes(ops_.q, q_host_),
                       host_bytes(ops_.k, k_host_),
                       host_bytes(ops_.v, v_host_),
                       nullptr};
    if (times_backward()) in.dout = host_bytes(ops_.dout, dout_host_);
    query_ref_ = query_reference(
        in, sample_rows(shape_, shape_.seqlen_q, kSampledRows, settings_.seed), times_backward());
    if (!times_backward()) return;
    if (key_reference_cost(shape_, kSampledKeys) > kMaxKeyReferenceCost) {
      key_note_ = "dk/dv not checked: a float64 head would cost too much";
      return;
    }
    key_ref_ = key_reference(in, kSampledKeys, settings_.seed + 1);
  }

  /// One error record per implementation and pass when the case could not even be set up.
  void record_setup_failure(const std::string& why) {
    for (const char* impl : {"flashvision", "naive"}) {
      if (std::string(impl) == "naive" && !settings_.naive) continue;
      for (const char* pass : {"fwd", "fwd+bwd"}) {
        if (std::string(pass) == "fwd+bwd" && !times_backward()) continue;
        BenchRecord r = base_record(impl, pass);
        r.error = why;
        records_.push_back(r);
      }
    }
  }

  BenchRecord base_record(const char* impl, const char* pass) const {
    BenchRecord r;
    r.case_name = case_.name;
    r.shape = shape_;
    r.dtype = settings_.dtype;
    r.causal = settings_.causal;
    r.device = device_.device();
    r.impl = impl;
    r.pass = pass;
    r.threads = settings_.threads;
    r.note = case_.note;
    return r;
  }

  void time_into(BenchRecord& r, const std::function<void()>& call) {
    const Measurement m =
        measure(device_, call, settings_.measure, label_ + " " + r.impl + " " + r.pass);
    const double flops =
        forward_flops(shape_, settings_.causal) * (r.pass == "fwd" ? 1.0 : kBackwardFlopFactor);
    r.ms = m.median_ms;
    r.tflops = flops / (m.median_ms * 1e-3) / 1e12;
    r.peak_bytes = m.peak_bytes;
    r.reps = m.reps;
  }

  double error_of(const std::vector<double>& ref, const std::vector<RowIndex>& rows,
                  const DeviceBuffer& actual, DType dtype, int64_t rows_per_seq) {
    std::vector<std::byte> scratch;
    return max_abs_error(ref, rows, host_bytes(actual, scratch), dtype, shape_, rows_per_seq);
  }

  /// Fills the error fields from the outputs; dq/dk/dv only for fwd+bwd records.
  void check(BenchRecord& r, DType dtype, const DeviceBuffer& out, const DeviceBuffer* dq,
             const DeviceBuffer* dk, const DeviceBuffer* dv) {
    double worst = error_of(query_ref_.out, query_ref_.rows, out, dtype, shape_.seqlen_q);
    if (dq != nullptr) {
      r.max_err_dq = error_of(query_ref_.dq, query_ref_.rows, *dq, dtype, shape_.seqlen_q);
      worst = std::max(worst, *r.max_err_dq);
      if (key_ref_) {
        r.max_err_dk = error_of(key_ref_->dk, key_ref_->rows, *dk, dtype, shape_.seqlen_k);
        r.max_err_dv = error_of(key_ref_->dv, key_ref_->rows, *dv, dtype, shape_.seqlen_k);
        worst = std::max({worst, *r.max_err_dk, *r.max_err_dv});
      } else {
        append_note(r.note, key_note_);
      }
    }
    r.max_err = worst;
    for (const std::optional<double>& err : {r.max_err, r.max_err_dq, r.max_err_dk, r.max_err_dv}) {
      if (err && std::isnan(*err)) {
        r.max_err = *err;
        append_note(r.note, "non-finite values in the checked outputs");
        break;
      }
    }
  }

  void run_flashvision() {
    const Shape& s = shape_;
    const DType dt = settings_.dtype;
    const Device dev = device_.device();
    const int idx = device_.device_index();
    ForwardArgs fwd;
    fwd.q =
        contiguous_view(ops_.q.data(), dt, {s.batch, s.seqlen_q, s.heads, s.head_dim}, dev, idx);
    fwd.k =
        contiguous_view(ops_.k.data(), dt, {s.batch, s.seqlen_k, s.heads, s.head_dim}, dev, idx);
    fwd.v =
        contiguous_view(ops_.v.data(), dt, {s.batch, s.seqlen_k, s.heads, s.head_dim}, dev, idx);
    fwd.out =
        contiguous_view(ops_.out.data(), dt, {s.batch, s.seqlen_q, s.heads, s.head_dim}, dev, idx);
    fwd.lse =
        contiguous_view(ops_.lse.data(), DType::f32, {s.batch, s.heads, s.seqlen_q}, dev, idx);
    fwd.softmax_scale = scale_;
    fwd.causal = settings_.causal;
    fwd.stream = device_.stream();
    fwd.num_threads = settings_.threads.value_or(0);
    if (dev == Device::cuda) fwd.backend = settings_.kernel;

    BenchRecord forward_record = base_record("flashvision", "fwd");
    try {
      forward_record.kernel = selected_kernel(fwd);
      time_into(forward_record, [&] { forward(fwd); });
      check(forward_record, dt, ops_.out, nullptr, nullptr, nullptr);
    } catch (const std::exception& e) {
      forward_record.error = describe(e);
    }
    records_.push_back(forward_record);
    if (!times_backward()) return;

    BenchRecord both = base_record("flashvision", "fwd+bwd");
    both.kernel = forward_record.kernel;
    if (forward_record.error) {
      both.error = "forward failed: " + *forward_record.error;
      records_.push_back(both);
      return;
    }
    BackwardArgs bwd;
    static_cast<AttentionOptions&>(bwd) = static_cast<const AttentionOptions&>(fwd);
    bwd.q = fwd.q;
    bwd.k = fwd.k;
    bwd.v = fwd.v;
    bwd.out = fwd.out;
    bwd.lse = fwd.lse;
    if (dev == Device::cuda) bwd.backend = settings_.backward_kernel;
    bwd.dout =
        contiguous_view(ops_.dout.data(), dt, {s.batch, s.seqlen_q, s.heads, s.head_dim}, dev, idx);
    bwd.dq =
        contiguous_view(ops_.dq.data(), dt, {s.batch, s.seqlen_q, s.heads, s.head_dim}, dev, idx);
    bwd.dk =
        contiguous_view(ops_.dk.data(), dt, {s.batch, s.seqlen_k, s.heads, s.head_dim}, dev, idx);
    bwd.dv =
        contiguous_view(ops_.dv.data(), dt, {s.batch, s.seqlen_k, s.heads, s.head_dim}, dev, idx);
    try {
      // The forward's kernel, then the backward's: "sm90/sm80".
      both.kernel = forward_record.kernel.value_or("") + "/" + kernel_name(selected_backend(bwd));
      time_into(both, [&] {
        forward(fwd);
        backward(bwd);
      });
      check(both, dt, ops_.out, &ops_.dq, &ops_.dk, &ops_.dv);
    } catch (const std::exception& e) {
      both.error = describe(e);
    }
    records_.push_back(both);
  }

  /// fp32 copy of a benchmark-dtype operand, for a device whose naive path takes f32 only.
  DeviceBuffer float_copy(const DeviceBuffer& source, int64_t elements) {
    std::vector<std::byte> scratch;
    const std::vector<float> values =
        to_float32(host_bytes(source, scratch), settings_.dtype, elements);
    DeviceBuffer buffer = device_.allocate(values.size() * sizeof(float));
    device_.upload(buffer, values.data(), buffer.bytes());
    return buffer;
  }

  void run_naive() {
    const DType naive_dtype = device_.naive_dtype(settings_.dtype);
    const bool reuse = naive_dtype == settings_.dtype;  // the inputs need no float32 copy
    Operands naive;
    NaiveProblem problem{shape_, scale_, settings_.causal, naive_dtype};
    bool prepared = false;
    for (const bool with_backward : {false, true}) {
      if (with_backward && !times_backward()) break;
      BenchRecord r = base_record("naive", with_backward ? "fwd+bwd" : "fwd");
      const int64_t need = device_.naive_buffer_bytes(shape_, naive_dtype, with_backward);
      if (need > settings_.naive_cap_bytes) {
        r.error = "naive S buffer would need " + format_mb(need) + " MB > cap " +
                  format_mb(settings_.naive_cap_bytes) + " MB";
        records_.push_back(r);
        continue;
      }
      try {
        if (!prepared) {
          if (!reuse) {
            naive.q = float_copy(ops_.q, q_elements());
            naive.k = float_copy(ops_.k, k_elements());
            naive.v = float_copy(ops_.v, k_elements());
            if (times_backward()) naive.dout = float_copy(ops_.dout, q_elements());
          }
          const Operands& in = reuse ? ops_ : naive;
          problem.q = in.q.data();
          problem.k = in.k.data();
          problem.v = in.v.data();
          problem.dout = in.dout.data();
          naive.out = poisoned(bytes_of(q_elements(), naive_dtype));
          problem.out = naive.out.data();
          if (times_backward()) {
            naive.dq = poisoned(bytes_of(q_elements(), naive_dtype));
            naive.dk = poisoned(bytes_of(k_elements(), naive_dtype));
            naive.dv = poisoned(bytes_of(k_elements(), naive_dtype));
            problem.dq = naive.dq.data();
            problem.dk = naive.dk.data();
            problem.dv = naive.dv.data();
          }
          prepared = true;
        }
        if (with_backward) {
          time_into(r, [&] { device_.naive_forward_backward(problem); });
          check(r, naive_dtype, naive.out, &naive.dq, &naive.dk, &naive.dv);
        } else {
          time_into(r, [&] { device_.naive_forward(problem); });
          check(r, naive_dtype, naive.out, nullptr, nullptr, nullptr);
        }
      } catch (const std::exception& e) {
        r.error = describe(e);
      }
      records_.push_back(r);
    }
  }

  /// Whether fwd+bwd is timed: --backward, except on the cases BENCH.md times forward only.
  bool times_backward() const { return settings_.backward && !case_.forward_only; }

  const BenchCase& case_;
  const Shape shape_;
  const RunSettings& settings_;
  BenchDevice& device_;
  const std::string label_;
  const float scale_;
  Operands ops_;
  std::vector<std::byte> q_host_, k_host_, v_host_,
      dout_host_;  // host copies where the device needs them
  QueryReference query_ref_;
  std::optional<KeyReference> key_ref_;
  std::string key_note_;
  std::vector<BenchRecord> records_;
};

}  // namespace

std::vector<BenchRecord> run_case(const BenchCase& bench_case, const RunSettings& settings,
                                  BenchDevice& device, CaseProgress progress) {
  return CaseRunner(bench_case, settings, device, progress).run();
}

}  // namespace flashvision::tool
