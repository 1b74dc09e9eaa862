// flashvision._C: the thin layer between DLPack arrays (numpy, torch, ...) and the C++ API.
//
// Every argument check beyond "is this an array we can describe" happens in the library itself;
// this file only turns arrays into TensorViews, releases the GIL and maps errors. Arrays arrive
// two ways: as DLPack-capable objects (numpy; anything else), or, from flashvision.torch, as
// plain (data_ptr, dtype code, device, shape, strides) tuples, because importing a torch tensor
// over DLPack costs microseconds per tensor, which dominates short attention calls.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashvision/flashvision.h"

namespace nb = nanobind;

namespace {

using flashvision::Backend;
using flashvision::Device;
using flashvision::DType;
using flashvision::Error;
using flashvision::TensorView;

/// An array the library only reads (read-only numpy arrays are accepted).
using InArray = nb::ndarray<nb::ro>;
/// An array the library writes.
using OutArray = nb::ndarray<>;

constexpr int kMaxRank = 4;

/// Readable name of a DLPack dtype for messages, numpy style ("float64", "int8", "bfloat16").
std::string dtype_name(nb::dlpack::dtype dt) {
  using Code = nb::dlpack::dtype_code;
  std::string base;
  switch (static_cast<Code>(dt.code)) {
    case Code::Int: base = "int"; break;
    case Code::UInt: base = "uint"; break;
    case Code::Float: base = "float"; break;
    case Code::Bfloat: base = "bfloat"; break;
    case Code::Complex: base = "complex"; break;
    case Code::Bool: return "bool";
    case Code::Float8_E4M3FN: return "float8_e4m3fn";
    default: return "dlpack-code-" + std::to_string(dt.code) + "-bits-" + std::to_string(dt.bits);
  }
  std::string name = base + std::to_string(dt.bits);
  if (dt.lanes != 1) name += "x" + std::to_string(dt.lanes);
  return name;
}

DType to_dtype(nb::dlpack::dtype dt, const std::string& name) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(dt.code);
  if (dt.lanes == 1) {
    if (code == Code::Float && dt.bits == 32) return DType::f32;
    if (code == Code::Float && dt.bits == 16) return DType::f16;
    if (code == Code::Bfloat && dt.bits == 16) return DType::bf16;
    if (code == Code::Int && dt.bits == 32) return DType::i32;
    if (code == Code::Float8_E4M3FN && dt.bits == 8) return DType::f8e4m3;
  }
  throw Error(name + ".dtype is " + dtype_name(dt) +
              "; expected float32, float16, bfloat16 or float8_e4m3fn (int32 for cu_seqlens)");
}

/// Describes a nanobind ndarray as a TensorView; `name` is the argument's name for messages.
template <typename Array>
TensorView to_view(const Array& a, const std::string& name) {
  TensorView view;
  const int rank = static_cast<int>(a.ndim());
  if (rank < 1 || rank > kMaxRank) {
    throw Error(name + " has rank " + std::to_string(rank) + "; expected 1 to " +
                std::to_string(kMaxRank) + " dimensions");
  }
  switch (a.device_type()) {
    case nb::device::cpu::value: view.device = Device::cpu; break;
    case nb::device::cuda::value: view.device = Device::cuda; break;
    default:
      throw Error(name + " is on DLPack device type " + std::to_string(a.device_type()) +
                  "; expected cpu (1) or cuda (2)");
  }
  view.device_index = a.device_id();
  view.dtype = to_dtype(a.dtype(), name);
  view.data = const_cast<void*>(static_cast<const void*>(a.data()));
  view.rank = rank;
  for (int i = 0; i < rank; ++i) {
    view.shape[i] = static_cast<int64_t>(a.shape(i));
    view.stride[i] = a.stride(i);
  }
  return view;
}

template <typename Array>
TensorView optional_view(const std::optional<Array>& a, const std::string& name) {
  return a ? to_view(*a, name) : TensorView{};
}

/// The DType behind a code of torch_dtype_codes; `name` is the argument's name for messages.
DType described_dtype(int64_t code, const char* name) {
  switch (code) {
    case static_cast<int64_t>(DType::f32): return DType::f32;
    case static_cast<int64_t>(DType::f16): return DType::f16;
    case static_cast<int64_t>(DType::bf16): return DType::bf16;
    case static_cast<int64_t>(DType::i32): return DType::i32;
    case static_cast<int64_t>(DType::f8e4m3): return DType::f8e4m3;
    default:
      throw Error(std::string(name) + " has dtype code " + std::to_string(code) +
                  "; expected a code of flashvision._C.torch_dtype_codes");
  }
}

/// Describes a (data_ptr, dtype code, device, shape, strides) tuple as a TensorView; device is
/// -1 for host memory and the GPU ordinal for CUDA memory, strides count elements. None gives
/// an absent view. `name` is the argument's name for messages.
TensorView described_view(nb::handle desc, const char* name) {
  if (desc.is_none()) return TensorView{};
  if (!nb::isinstance<nb::tuple>(desc) || nb::len(desc) != 5) {
    throw Error(std::string(name) +
                " must be a (data_ptr, dtype code, device, shape, strides) tuple");
  }
  const auto t = nb::borrow<nb::tuple>(desc);
  if (!nb::isinstance<nb::tuple>(t[3]) || !nb::isinstance<nb::tuple>(t[4])) {
    throw Error(std::string(name) + "'s shape and strides must be tuples");
  }
  const auto shape = nb::borrow<nb::tuple>(t[3]);
  const auto strides = nb::borrow<nb::tuple>(t[4]);
  const auto rank = static_cast<int>(nb::len(shape));
  if (rank < 1 || rank > kMaxRank || nb::len(strides) != static_cast<size_t>(rank)) {
    throw Error(std::string(name) + " has rank " + std::to_string(rank) + " and " +
                std::to_string(nb::len(strides)) + " strides; expected 1 to " +
                std::to_string(kMaxRank) + " dimensions, one stride each");
  }
  TensorView view;
  view.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[0]));
  view.dtype = described_dtype(nb::cast<int64_t>(t[1]), name);
  const int device = nb::cast<int>(t[2]);
  view.device = device < 0 ? Device::cpu : Device::cuda;
  view.device_index = device < 0 ? 0 : device;
  view.rank = rank;
  for (int i = 0; i < rank; ++i) {
    view.shape[i] = nb::cast<int64_t>(shape[i]);
    view.stride[i] = nb::cast<int64_t>(strides[i]);
  }
  return view;
}

Backend to_backend(const std::string& name) {
  for (Backend b : {Backend::automatic, Backend::cpu, Backend::cuda_sm80, Backend::cuda_sm90}) {
    if (name == flashvision::to_string(b)) return b;
  }
  throw Error("backend is '" + name + "'; expected automatic, cpu, cuda-sm80 or cuda-sm90");
}

/// Options shared by forward and backward, as the Python side passes them.
struct Options {
  float scale;
  bool causal;
  std::optional<InArray> cu_seqlens_q, cu_seqlens_k;
  int max_seqlen_q, max_seqlen_k;
  std::uintptr_t stream;
  std::string backend;
  int num_threads;

  void apply(flashvision::AttentionOptions& o) const {
    o.softmax_scale = scale;
    o.causal = causal;
    o.cu_seqlens_q = optional_view(cu_seqlens_q, "cu_seqlens_q");
    o.cu_seqlens_k = optional_view(cu_seqlens_k, "cu_seqlens_k");
    o.max_seqlen_q = max_seqlen_q;
    o.max_seqlen_k = max_seqlen_k;
    o.stream = reinterpret_cast<void*>(stream);
    o.backend = to_backend(backend);
    o.num_threads = num_threads;
  }
};

void forward(const InArray& q, const InArray& k, const InArray& v, const OutArray& out,
             const std::optional<OutArray>& lse, float scale, bool causal,
             const std::optional<InArray>& cu_seqlens_q, const std::optional<InArray>& cu_seqlens_k,
             int max_seqlen_q, int max_seqlen_k, std::uintptr_t stream, const std::string& backend,
             int num_threads, float descale_q, float descale_k, float descale_v) {
  flashvision::ForwardArgs args;
  Options{scale,        causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
          max_seqlen_k, stream, backend,      num_threads}
      .apply(args);
  args.descale_q = descale_q;
  args.descale_k = descale_k;
  args.descale_v = descale_v;
  args.q = to_view(q, "q");
  args.k = to_view(k, "k");
  args.v = to_view(v, "v");
  args.out = to_view(out, "out");
  args.lse = optional_view(lse, "lse");
  nb::gil_scoped_release release;
  flashvision::forward(args);
}

void backward(const InArray& dout, const InArray& q, const InArray& k, const InArray& v,
              const InArray& out, const InArray& lse, const OutArray& dq, const OutArray& dk,
              const OutArray& dv, float scale, bool causal,
              const std::optional<InArray>& cu_seqlens_q,
              const std::optional<InArray>& cu_seqlens_k, int max_seqlen_q, int max_seqlen_k,
              bool deterministic, std::uintptr_t stream, const std::string& backend,
              int num_threads) {
  flashvision::BackwardArgs args;
  Options{scale,        causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
          max_seqlen_k, stream, backend,      num_threads}
      .apply(args);
  args.dout = to_view(dout, "dout");
  args.q = to_view(q, "q");
  args.k = to_view(k, "k");
  args.v = to_view(v, "v");
  args.out = to_view(out, "out");
  args.lse = to_view(lse, "lse");
  args.dq = to_view(dq, "dq");
  args.dk = to_view(dk, "dk");
  args.dv = to_view(dv, "dv");
  args.deterministic = deterministic;
  nb::gil_scoped_release release;
  flashvision::backward(args);
}

/// An f32 view of q's first bytes in the lse layout that q implies ([B, H, N] for a dense
/// [B, N, H, D] q, [H, total] for a packed [total, H, D] one): a stand-in that is never read.
TensorView lse_stand_in(const TensorView& q) {
  TensorView lse;
  lse.data = q.data;
  lse.device = q.device;
  lse.device_index = q.device_index;
  if (q.rank == 4) {
    lse.rank = 3;
    lse.shape = {q.shape[0], q.shape[2], q.shape[1], 0};
    lse.stride = {q.shape[2] * q.shape[1], q.shape[1], 1, 0};
  } else if (q.rank == 3) {
    lse.rank = 2;
    lse.shape = {q.shape[1], q.shape[0], 0, 0};
    lse.stride = {q.shape[0], 1, 0, 0};
  }
  return lse;
}

/// kernel_name(selected_backend(...)): the kernel forward() (or, with `backward`, backward())
/// would run for q, k, v and options.
std::string selected_kernel(const InArray& q, const InArray& k, const InArray& v, float scale,
                            bool causal, const std::optional<InArray>& cu_seqlens_q,
                            const std::optional<InArray>& cu_seqlens_k, int max_seqlen_q,
                            int max_seqlen_k, const std::string& backend, bool backward,
                            bool deterministic) {
  // The selection validates a whole call, outputs included. q has the shape, dtype and device of
  // out, dout and dq, k and v those of dk and dv, and nothing is read or written, so they stand
  // in for them (and q's bytes for the lse).
  const Options options{scale,   causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, 0,
                        backend, 0};
  if (backward) {
    flashvision::BackwardArgs args;
    options.apply(args);
    args.deterministic = deterministic;
    args.q = args.out = args.dout = args.dq = to_view(q, "q");
    args.k = args.dk = to_view(k, "k");
    args.v = args.dv = to_view(v, "v");
    args.lse = lse_stand_in(args.q);
    return flashvision::kernel_name(flashvision::selected_backend(args));
  }
  flashvision::ForwardArgs args;
  options.apply(args);
  args.q = args.out = to_view(q, "q");
  args.k = to_view(k, "k");
  args.v = to_view(v, "v");
  return flashvision::selected_kernel(args);
}

/// The options forward_described and backward_described share.
void set_described_options(flashvision::AttentionOptions& options, float scale, bool causal,
                           nb::handle cu_seqlens_q, nb::handle cu_seqlens_k, int max_seqlen_q,
                           int max_seqlen_k, std::uintptr_t stream) {
  options.softmax_scale = scale;
  options.causal = causal;
  options.cu_seqlens_q = described_view(cu_seqlens_q, "cu_seqlens_q");
  options.cu_seqlens_k = described_view(cu_seqlens_k, "cu_seqlens_k");
  options.max_seqlen_q = max_seqlen_q;
  options.max_seqlen_k = max_seqlen_k;
  options.stream = reinterpret_cast<void*>(stream);
}

/// forward() for described tensors (see described_view), with the automatic backend.
void forward_described(nb::handle q, nb::handle k, nb::handle v, nb::handle out, nb::handle lse,
                       float scale, bool causal, nb::handle cu_seqlens_q, nb::handle cu_seqlens_k,
                       int max_seqlen_q, int max_seqlen_k, std::uintptr_t stream, float descale_q,
                       float descale_k, float descale_v) {
  flashvision::ForwardArgs args;
  set_described_options(args, scale, causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                        stream);
  args.descale_q = descale_q;
  args.descale_k = descale_k;
  args.descale_v = descale_v;
  args.q = described_view(q, "q");
  args.k = described_view(k, "k");
  args.v = described_view(v, "v");
  args.out = described_view(out, "out");
  args.lse = described_view(lse, "lse");
  nb::gil_scoped_release release;
  flashvision::forward(args);
}

/// BackwardArgs for described tensors (see described_view), with the automatic backend.
flashvision::BackwardArgs described_backward_args(nb::handle dout, nb::handle q, nb::handle k,
                                                  nb::handle v, nb::handle out, nb::handle lse,
                                                  nb::handle dq, nb::handle dk, nb::handle dv,
                                                  float scale, bool causal, nb::handle cu_seqlens_q,
                                                  nb::handle cu_seqlens_k, int max_seqlen_q,
                                                  int max_seqlen_k, bool deterministic,
                                                  std::uintptr_t stream) {
  flashvision::BackwardArgs args;
  set_described_options(args, scale, causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                        stream);
  args.dout = described_view(dout, "dout");
  args.q = described_view(q, "q");
  args.k = described_view(k, "k");
  args.v = described_view(v, "v");
  args.out = described_view(out, "out");
  args.lse = described_view(lse, "lse");
  args.dq = described_view(dq, "dq");
  args.dk = described_view(dk, "dk");
  args.dv = described_view(dv, "dv");
  args.deterministic = deterministic;
  return args;
}

/// backward() for described tensors; `workspace` (a device pointer as an int, 0 for none) and
/// `workspace_bytes` as BackwardArgs::workspace.
void backward_described(nb::handle dout, nb::handle q, nb::handle k, nb::handle v, nb::handle out,
                        nb::handle lse, nb::handle dq, nb::handle dk, nb::handle dv, float scale,
                        bool causal, nb::handle cu_seqlens_q, nb::handle cu_seqlens_k,
                        int max_seqlen_q, int max_seqlen_k, bool deterministic,
                        std::uintptr_t stream, std::uintptr_t workspace,
                        std::size_t workspace_bytes) {
  flashvision::BackwardArgs args =
      described_backward_args(dout, q, k, v, out, lse, dq, dk, dv, scale, causal, cu_seqlens_q,
                              cu_seqlens_k, max_seqlen_q, max_seqlen_k, deterministic, stream);
  args.workspace = reinterpret_cast<void*>(workspace);
  args.workspace_bytes = workspace_bytes;
  nb::gil_scoped_release release;
  flashvision::backward(args);
}

/// backward_workspace_size() for the described tensors of a backward_described call.
std::size_t backward_workspace_size_described(nb::handle dout, nb::handle q, nb::handle k,
                                              nb::handle v, nb::handle out, nb::handle lse,
                                              nb::handle dq, nb::handle dk, nb::handle dv,
                                              float scale, bool causal, nb::handle cu_seqlens_q,
                                              nb::handle cu_seqlens_k, int max_seqlen_q,
                                              int max_seqlen_k, bool deterministic) {
  return flashvision::backward_workspace_size(
      described_backward_args(dout, q, k, v, out, lse, dq, dk, dv, scale, causal, cu_seqlens_q,
                              cu_seqlens_k, max_seqlen_q, max_seqlen_k, deterministic, 0));
}

std::vector<std::string> compiled_backend_names() {
  std::vector<std::string> names;
  for (Backend b : flashvision::compiled_backends()) names.emplace_back(flashvision::to_string(b));
  return names;
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "flashvision's C++ core over DLPack (use the functions of the flashvision package)";
  m.attr("__version__") = flashvision::kVersion;
  m.attr("__build_commit__") = flashvision::build_commit();
  nb::exception<Error>(m, "Error", PyExc_ValueError);

  m.def("forward", &forward, nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"),
        nb::arg("lse").none() = nb::none(), nb::kw_only(), nb::arg("scale") = 0.0f,
        nb::arg("causal") = false, nb::arg("cu_seqlens_q").none() = nb::none(),
        nb::arg("cu_seqlens_k").none() = nb::none(), nb::arg("max_seqlen_q") = 0,
        nb::arg("max_seqlen_k") = 0, nb::arg("stream") = 0, nb::arg("backend") = "automatic",
        nb::arg("num_threads") = 0, nb::arg("descale_q") = 1.0f, nb::arg("descale_k") = 1.0f,
        nb::arg("descale_v") = 1.0f,
        "Writes out (and lse) for q [B, Nq, H, D] (or packed [total_q, H, D] with cu_seqlens); "
        "scale 0 means 1/sqrt(D); stream is a cudaStream_t as an int. float8_e4m3fn q, k, v "
        "(out bfloat16) stand for their values times descale_q, descale_k, descale_v.");
  m.def("backward", &backward, nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"),
        nb::arg("out"), nb::arg("lse"), nb::arg("dq"), nb::arg("dk"), nb::arg("dv"), nb::kw_only(),
        nb::arg("scale") = 0.0f, nb::arg("causal") = false,
        nb::arg("cu_seqlens_q").none() = nb::none(), nb::arg("cu_seqlens_k").none() = nb::none(),
        nb::arg("max_seqlen_q") = 0, nb::arg("max_seqlen_k") = 0, nb::arg("deterministic") = false,
        nb::arg("stream") = 0, nb::arg("backend") = "automatic", nb::arg("num_threads") = 0,
        "Writes dq, dk, dv from the forward call's q, k, v, out, lse and dout.");
  m.def("forward_described", &forward_described, nb::arg("q"), nb::arg("k"), nb::arg("v"),
        nb::arg("out"), nb::arg("lse").none(), nb::arg("scale"), nb::arg("causal"),
        nb::arg("cu_seqlens_q").none(), nb::arg("cu_seqlens_k").none(), nb::arg("max_seqlen_q"),
        nb::arg("max_seqlen_k"), nb::arg("stream"), nb::arg("descale_q") = 1.0f,
        nb::arg("descale_k") = 1.0f, nb::arg("descale_v") = 1.0f,
        "forward() with tensors as (data_ptr, dtype code, device, shape, strides) tuples "
        "(device -1 = host, else the CUDA ordinal; None for lse or cu_seqlens when absent): "
        "q, k, v, out, lse, scale, causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, "
        "max_seqlen_k, stream, and for float8_e4m3fn inputs descale_q, descale_k, descale_v.");
  m.def("backward_described", &backward_described, nb::arg("dout"), nb::arg("q"), nb::arg("k"),
        nb::arg("v"), nb::arg("out"), nb::arg("lse"), nb::arg("dq"), nb::arg("dk"), nb::arg("dv"),
        nb::arg("scale"), nb::arg("causal"), nb::arg("cu_seqlens_q").none(),
        nb::arg("cu_seqlens_k").none(), nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"),
        nb::arg("deterministic"), nb::arg("stream"), nb::arg("workspace"),
        nb::arg("workspace_bytes"),
        "backward() with described tensors as in forward_described: dout, q, k, v, out, lse, "
        "dq, dk, dv, scale, causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, "
        "deterministic, stream, workspace (device pointer as an int, 0: the call allocates), "
        "workspace_bytes.");
  m.def("backward_workspace_size_described", &backward_workspace_size_described, nb::arg("dout"),
        nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse"), nb::arg("dq"),
        nb::arg("dk"), nb::arg("dv"), nb::arg("scale"), nb::arg("causal"),
        nb::arg("cu_seqlens_q").none(), nb::arg("cu_seqlens_k").none(), nb::arg("max_seqlen_q"),
        nb::arg("max_seqlen_k"), nb::arg("deterministic"),
        "Bytes of workspace backward_described needs for these described tensors (0 on the CPU).");
  m.def("selected_kernel", &selected_kernel, nb::arg("q"), nb::arg("k"), nb::arg("v"),
        nb::kw_only(), nb::arg("scale") = 0.0f, nb::arg("causal") = false,
        nb::arg("cu_seqlens_q").none() = nb::none(), nb::arg("cu_seqlens_k").none() = nb::none(),
        nb::arg("max_seqlen_q") = 0, nb::arg("max_seqlen_k") = 0, nb::arg("backend") = "automatic",
        nb::arg("backward") = false, nb::arg("deterministic") = false,
        "kernel_name(selected_backend(...)): the kernel forward() (or with backward=True, "
        "backward()) would run for these arrays and options (validated as that call validates "
        "them; nothing is computed).");
  nb::dict codes;
  codes["float32"] = static_cast<int>(DType::f32);
  codes["float16"] = static_cast<int>(DType::f16);
  codes["bfloat16"] = static_cast<int>(DType::bf16);
  codes["int32"] = static_cast<int>(DType::i32);
  codes["float8_e4m3fn"] = static_cast<int>(DType::f8e4m3);
  m.attr("torch_dtype_codes") = codes;
  m.def(
      "kernel_name",
      [](const std::string& backend) { return flashvision::kernel_name(to_backend(backend)); },
      nb::arg("backend"), "Name of the implementation behind a backend on this machine.");
  m.def("compiled_backends", &compiled_backend_names, "Backends compiled into this build.");
  m.def("describe_devices", &flashvision::describe_devices,
        "One line per device flashvision can run on.");
}
