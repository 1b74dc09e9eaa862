// Argument validation: every check happens here, once, before any backend runs.
//
// Each failure throws flashvision::Error with a message that names the argument, the value it had
// and what was expected, e.g. "k.shape[3] (head dim) is 72 but q has 64".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/problem.h"
#include "flashvision/error.h"

namespace flashvision::detail {
namespace {

constexpr int64_t kMaxHeadDim = 512;

[[noreturn]] void fail(const std::string& message) { throw Error(message); }

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail(what + " overflows int64");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail(what + " overflows int64");
  return r;
}

/// Names of the dimensions of one operand, for messages.
struct Dims {
  std::vector<const char*> names;
};

const Dims kDenseQ{{"batch", "seqlen_q", "heads", "head dim"}};
const Dims kDenseK{{"batch", "seqlen_k", "kv heads", "head dim"}};
const Dims kVarlenQ{{"total_q", "heads", "head dim"}};
const Dims kVarlenK{{"total_k", "kv heads", "head dim"}};
const Dims kDenseLse{{"batch", "heads", "seqlen_q"}};
const Dims kVarlenLse{{"heads", "total_q"}};
const Dims kCuSeqlens{{"batch + 1"}};

std::string joined_names(const Dims& dims) {
  std::string s;
  for (const char* n : dims.names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// Checks what any operand needs: present, rank, non-negative sizes and strides, a contiguous last
/// dimension (where required), and an addressable extent that fits int64.
void check_view(const TensorView& t, const std::string& name, const Dims& dims,
                bool contiguous_last) {
  const int rank = static_cast<int>(dims.names.size());
  // A tensor without elements may have no storage (PyTorch gives such tensors a null data_ptr).
  bool empty = false;
  for (int i = 0; i < t.rank && t.rank == rank; ++i) empty = empty || t.shape[i] == 0;
  if (t.data == nullptr && !empty) {
    fail(name + ".data is null; expected a pointer to " + name + "'s elements");
  }
  if (t.rank != rank) {
    fail(name + " has rank " + std::to_string(t.rank) + ", expected " + std::to_string(rank) +
         " (" + joined_names(dims) + ")");
  }
  int64_t span = 1;
  for (int i = 0; i < rank; ++i) {
    const std::string dim = name + ".shape[" + std::to_string(i) + "] (" + dims.names[i] + ")";
    if (t.shape[i] < 0) fail(dim + " is " + std::to_string(t.shape[i]) + ", expected >= 0");
    if (t.stride[i] < 0) {
      fail(name + ".stride[" + std::to_string(i) + "] is " + std::to_string(t.stride[i]) +
           ", expected >= 0");
    }
    if (t.shape[i] > 0) {
      span = checked_add(span, checked_mul(t.shape[i] - 1, t.stride[i], name + "'s extent"),
                         name + "'s extent");
    }
  }
  checked_mul(span, static_cast<int64_t>(element_size(t.dtype)), name + "'s size in bytes");
  if (contiguous_last && t.shape[rank - 1] > 1 && t.stride[rank - 1] != 1) {
    fail(name + ".stride[" + std::to_string(rank - 1) + "] is " +
         std::to_string(t.stride[rank - 1]) +
         ", expected 1 (the last dimension must be contiguous)");
  }
}

void expect_dim(const TensorView& t, const std::string& name, const Dims& dims, int i,
                int64_t expected, const std::string& source) {
  if (t.shape[i] != expected) {
    fail(name + ".shape[" + std::to_string(i) + "] (" + dims.names[i] + ") is " +
         std::to_string(t.shape[i]) + " but " + source + " " + std::to_string(expected));
  }
}

void expect_positive(const TensorView& t, const std::string& name, const Dims& dims, int i) {
  if (t.shape[i] < 1) {
    fail(name + ".shape[" + std::to_string(i) + "] (" + dims.names[i] + ") is " +
         std::to_string(t.shape[i]) + ", expected >= 1");
  }
}

void expect_dtype(const TensorView& t, const std::string& name, DType expected,
                  const std::string& source) {
  if (t.dtype != expected) {
    fail(name + ".dtype is " + std::string(to_string(t.dtype)) + " but " + source + " " +
         to_string(expected));
  }
}

void expect_same_device(const TensorView& t, const std::string& name, const TensorView& q) {
  if (t.device != q.device || (q.device == Device::cuda && t.device_index != q.device_index)) {
    const auto where = [](const TensorView& x) {
      std::string s = to_string(x.device);
      if (x.device == Device::cuda) s.append(":").append(std::to_string(x.device_index));
      return s;
    };
    fail(name + " is on " + where(t) + " but q is on " + where(q) +
         "; expected every tensor on one device");
  }
}

Operand operand(const TensorView& t, bool varlen) {
  if (varlen) return {t.data, 0, t.stride[0], t.stride[1]};
  return {t.data, t.stride[0], t.stride[1], t.stride[2]};
}

/// Checks a tensor that must have exactly the shape and dtype of `like` (out, dout, dq, dk, dv);
/// with `dtype`, that dtype instead (`dtype_source` says why, e.g. "f8e4m3 inputs need").
Operand like_operand(const TensorView& t, const std::string& name, const TensorView& like,
                     const std::string& like_name, const Dims& dims, bool varlen,
                     std::optional<DType> dtype = std::nullopt,
                     const std::string& dtype_source = "") {
  check_view(t, name, dims, true);
  if (dtype) {
    expect_dtype(t, name, *dtype, dtype_source);
  } else {
    expect_dtype(t, name, like.dtype, like_name + " has");
  }
  expect_same_device(t, name, like);
  for (int i = 0; i < like.rank; ++i)
    expect_dim(t, name, dims, i, like.shape[i], like_name + " has");
  return operand(t, varlen);
}

/// Reads and checks host cu_seqlens; returns the longest sequence.
int64_t check_cu_seqlens_values(const TensorView& cu, const std::string& name, int64_t total,
                                const std::string& total_name) {
  const auto* offsets = static_cast<const int32_t*>(cu.data);
  const int64_t entries = cu.shape[0];
  const auto value = [&](int64_t i) { return static_cast<int64_t>(offsets[i * cu.stride[0]]); };
  if (value(0) != 0) fail(name + "[0] is " + std::to_string(value(0)) + ", expected 0");
  int64_t longest = 0;
  for (int64_t i = 1; i < entries; ++i) {
    const int64_t len = value(i) - value(i - 1);
    if (len < 0) {
      fail(name + " is not non-decreasing: " + name + "[" + std::to_string(i) +
           "] = " + std::to_string(value(i)) + " < " + name + "[" + std::to_string(i - 1) +
           "] = " + std::to_string(value(i - 1)));
    }
    longest = std::max(longest, len);
  }
  if (value(entries - 1) != total) {
    fail(name + "[" + std::to_string(entries - 1) + "] is " + std::to_string(value(entries - 1)) +
         " but " + total_name + " is " + std::to_string(total) + "; expected them equal");
  }
  return longest;
}

/// Validates cu_seqlens_q/k and max_seqlen_q/k; fills the varlen fields of `p`.
void check_varlen(const AttentionOptions& o, const TensorView& q, const TensorView& k, Problem& p) {
  if (!o.cu_seqlens_q.present() || !o.cu_seqlens_k.present()) {
    fail(std::string(o.cu_seqlens_q.present() ? "cu_seqlens_k" : "cu_seqlens_q") +
         " is missing; varlen mode needs both cu_seqlens_q and cu_seqlens_k");
  }
  for (const auto& [cu, name] :
       {std::pair{&o.cu_seqlens_q, "cu_seqlens_q"}, std::pair{&o.cu_seqlens_k, "cu_seqlens_k"}}) {
    check_view(*cu, name, kCuSeqlens, false);
    expect_dtype(*cu, name, DType::i32, "cu_seqlens must be");
    expect_same_device(*cu, name, q);
    if (cu->shape[0] < 2) {
      fail(std::string(name) + ".shape[0] (batch + 1) is " + std::to_string(cu->shape[0]) +
           ", expected >= 2 (at least one sequence)");
    }
  }
  expect_dim(o.cu_seqlens_k, "cu_seqlens_k", kCuSeqlens, 0, o.cu_seqlens_q.shape[0],
             "cu_seqlens_q has");
  if (o.cu_seqlens_q.stride[0] != 1 || o.cu_seqlens_k.stride[0] != 1) {
    fail(std::string(o.cu_seqlens_q.stride[0] != 1 ? "cu_seqlens_q" : "cu_seqlens_k") +
         ".stride[0] is not 1; expected a contiguous int32 array");
  }
  if (o.max_seqlen_q < 0 || o.max_seqlen_k < 0) {
    fail(std::string(o.max_seqlen_q < 0 ? "max_seqlen_q" : "max_seqlen_k") +
         " is negative; expected >= 0 (0 means: compute it)");
  }
  p.varlen = true;
  p.batch = o.cu_seqlens_q.shape[0] - 1;
  p.total_q = q.shape[0];
  p.total_k = k.shape[0];
  p.cu_seqlens_q = static_cast<const int32_t*>(o.cu_seqlens_q.data);
  p.cu_seqlens_k = static_cast<const int32_t*>(o.cu_seqlens_k.data);
  if (q.device == Device::cpu) {
    const int64_t longest_q =
        check_cu_seqlens_values(o.cu_seqlens_q, "cu_seqlens_q", p.total_q, "q.shape[0] (total_q)");
    const int64_t longest_k =
        check_cu_seqlens_values(o.cu_seqlens_k, "cu_seqlens_k", p.total_k, "k.shape[0] (total_k)");
    for (const auto& [given, longest, name] :
         {std::tuple{o.max_seqlen_q, longest_q, "max_seqlen_q"},
          std::tuple{o.max_seqlen_k, longest_k, "max_seqlen_k"}}) {
      if (given != 0 && given < longest) {
        fail(std::string(name) + " is " + std::to_string(given) + " but the longest sequence has " +
             std::to_string(longest) + " rows; expected >= " + std::to_string(longest) + " or 0");
      }
    }
    p.seqlen_q = longest_q;
    p.seqlen_k = longest_k;
  } else {
    // Device memory cannot be read here without a synchronization; GPU kernels clamp every row
    // index to [0, total) instead, and need the longest lengths to size their grids.
    if (o.max_seqlen_q < 1 || o.max_seqlen_k < 1) {
      fail(std::string(o.max_seqlen_q < 1 ? "max_seqlen_q" : "max_seqlen_k") +
           " is 0; expected the longest sequence length (> 0) for cu_seqlens in GPU memory");
    }
    p.seqlen_q = o.max_seqlen_q;
    p.seqlen_k = o.max_seqlen_k;
  }
}

/// Validates q, k, v and the options shared by forward and backward.
Problem make_common(const AttentionOptions& o, const TensorView& q, const TensorView& k,
                    const TensorView& v) {
  Problem p;
  const bool varlen = o.cu_seqlens_q.present() || o.cu_seqlens_k.present();
  const Dims& q_dims = varlen ? kVarlenQ : kDenseQ;
  const Dims& k_dims = varlen ? kVarlenK : kDenseK;
  check_view(q, "q", q_dims, true);
  if (q.dtype != DType::f32 && q.dtype != DType::f16 && q.dtype != DType::bf16 &&
      q.dtype != DType::f8e4m3) {
    fail("q.dtype is " + std::string(to_string(q.dtype)) + ", expected f32, f16, bf16 or f8e4m3");
  }
  check_view(k, "k", k_dims, true);
  check_view(v, "v", k_dims, true);
  expect_dtype(k, "k", q.dtype, "q has");
  expect_dtype(v, "v", q.dtype, "q has");
  expect_same_device(k, "k", q);
  expect_same_device(v, "v", q);

  const int r = q.rank;
  for (int i = 0; i < r - 1; ++i) {
    if (!varlen || i > 0) expect_positive(q, "q", q_dims, i);
  }
  expect_positive(q, "q", q_dims, r - 1);
  for (int i = varlen ? 1 : 0; i < r; ++i) expect_positive(k, "k", k_dims, i);
  if (!varlen) expect_dim(k, "k", k_dims, 0, q.shape[0], "q has");
  expect_dim(k, "k", k_dims, r - 1, q.shape[r - 1], "q has");
  for (int i = 0; i < r; ++i) expect_dim(v, "v", k_dims, i, k.shape[i], "k has");

  p.dtype = q.dtype;
  p.out_dtype = q.dtype == DType::f8e4m3 ? DType::bf16 : q.dtype;
  p.device = q.device;
  p.device_index = q.device_index;
  p.head_dim = q.shape[r - 1];
  p.heads = q.shape[r - 2];
  p.heads_kv = k.shape[r - 2];
  if (p.head_dim > kMaxHeadDim) {
    fail("q.shape[" + std::to_string(r - 1) + "] (head dim) is " + std::to_string(p.head_dim) +
         ", expected 1 to " + std::to_string(kMaxHeadDim));
  }
  if (p.heads % p.heads_kv != 0) {
    fail("k.shape[" + std::to_string(r - 2) + "] (kv heads) is " + std::to_string(p.heads_kv) +
         " but q has " + std::to_string(p.heads) +
         " heads; expected the query heads to be a multiple of the kv heads (GQA/MQA)");
  }
  if (varlen) {
    check_varlen(o, q, k, p);
  } else {
    p.batch = q.shape[0];
    p.seqlen_q = q.shape[1];
    p.seqlen_k = k.shape[1];
    p.total_q = checked_mul(p.batch, p.seqlen_q, "batch * seqlen_q");
    p.total_k = checked_mul(p.batch, p.seqlen_k, "batch * seqlen_k");
  }
  checked_mul(checked_mul(checked_mul(p.total_q, p.heads, "total_q * heads"), p.seqlen_k,
                          "total_q * heads * seqlen_k"),
              p.head_dim, "total_q * heads * seqlen_k * head dim");

  if (!std::isfinite(o.softmax_scale)) {
    fail("softmax_scale is " + std::to_string(o.softmax_scale) + ", expected a finite number");
  }
  p.scale = o.softmax_scale != 0.0f ? o.softmax_scale
                                    : static_cast<float>(1.0 / std::sqrt(double(p.head_dim)));
  p.causal = o.causal;
  p.stream = o.stream;
  if (o.num_threads < 0) {
    fail("num_threads is " + std::to_string(o.num_threads) + ", expected >= 0 (0: all threads)");
  }
  p.num_threads = o.num_threads;
  p.q = operand(q, varlen);
  p.k = operand(k, varlen);
  p.v = operand(v, varlen);
  return p;
}

LseOperand lse_operand(const TensorView& lse, const TensorView& q, const Problem& p) {
  const Dims& dims = p.varlen ? kVarlenLse : kDenseLse;
  check_view(lse, "lse", dims, false);
  expect_dtype(lse, "lse", DType::f32, "lse must be");
  expect_same_device(lse, "lse", q);
  if (p.varlen) {
    expect_dim(lse, "lse", dims, 0, p.heads, "q has heads");
    expect_dim(lse, "lse", dims, 1, p.total_q, "q has total_q");
    return {static_cast<float*>(lse.data), 0, lse.stride[0], lse.stride[1]};
  }
  expect_dim(lse, "lse", dims, 0, p.batch, "q has batch");
  expect_dim(lse, "lse", dims, 1, p.heads, "q has heads");
  expect_dim(lse, "lse", dims, 2, p.seqlen_q, "q has seqlen_q");
  return {static_cast<float*>(lse.data), lse.stride[0], lse.stride[1], lse.stride[2]};
}

/// The FP8 forward's own checks, and its descales folded into the problem.
void check_fp8_forward(const ForwardArgs& args, Problem& p) {
  for (const auto& [name, value] : {std::pair{"descale_q", args.descale_q},
                                    {"descale_k", args.descale_k},
                                    {"descale_v", args.descale_v}}) {
    if (p.dtype != DType::f8e4m3 && value != 1.0f) {
      fail(std::string(name) + " is " + std::to_string(value) + " but q.dtype is " +
           to_string(p.dtype) + "; descales apply to f8e4m3 inputs only (expected 1)");
    }
    if (!(std::isfinite(value) && value > 0.0f)) {
      fail(std::string(name) + " is " + std::to_string(value) + ", expected a finite number > 0");
    }
  }
  if (p.dtype != DType::f8e4m3) return;
  if (p.varlen) {
    fail("q.dtype is f8e4m3, which the forward takes in dense mode only (no cu_seqlens)");
  }
  if (args.softmax_scale < 0.0f) {
    fail("softmax_scale is " + std::to_string(args.softmax_scale) +
         " with f8e4m3 inputs, expected a number >= 0 (0: 1/sqrt(D))");
  }
  p.scale *= args.descale_q * args.descale_k;
  p.descale_v = args.descale_v;
}

}  // namespace

Problem make_forward_problem(const ForwardArgs& args) {
  Problem p = make_common(args, args.q, args.k, args.v);
  const Dims& q_dims = p.varlen ? kVarlenQ : kDenseQ;
  p.out = like_operand(args.out, "out", args.q, "q", q_dims, p.varlen, p.out_dtype,
                       "f8e4m3 inputs need");
  if (args.lse.present()) p.lse = lse_operand(args.lse, args.q, p);
  check_fp8_forward(args, p);
  return p;
}

Problem make_backward_problem(const BackwardArgs& args) {
  Problem p = make_common(args, args.q, args.k, args.v);
  if (p.dtype == DType::f8e4m3) {
    fail("q.dtype is f8e4m3, which the forward takes only; the backward needs f32, f16 or bf16");
  }
  const Dims& q_dims = p.varlen ? kVarlenQ : kDenseQ;
  const Dims& k_dims = p.varlen ? kVarlenK : kDenseK;
  p.out = like_operand(args.out, "out", args.q, "q", q_dims, p.varlen);
  if (!args.lse.present()) fail("lse is missing; backward needs the lse the forward call wrote");
  p.lse = lse_operand(args.lse, args.q, p);
  p.dout = like_operand(args.dout, "dout", args.q, "q", q_dims, p.varlen);
  p.dq = like_operand(args.dq, "dq", args.q, "q", q_dims, p.varlen);
  p.dk = like_operand(args.dk, "dk", args.k, "k", k_dims, p.varlen);
  p.dv = like_operand(args.dv, "dv", args.v, "v", k_dims, p.varlen);
  p.deterministic = args.deterministic;
  // The size is checked by the backend, which knows what the call needs.
  if (args.workspace != nullptr && reinterpret_cast<std::uintptr_t>(args.workspace) % 256 != 0) {
    fail("workspace is not 256-byte aligned; expected device memory from an allocator "
         "(cudaMalloc or a framework's) or nullptr");
  }
  p.workspace = args.workspace;
  p.workspace_bytes = args.workspace_bytes;
  return p;
}

}  // namespace flashvision::detail
