// flashvision._C: the thin layer between DLPack arrays (numpy, torch, ...) and the C++ API.
//
// Every argument check beyond "is this an array we can describe" happens in the library itself;
// this file only turns nanobind ndarrays into TensorViews, releases the GIL and maps errors.
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
  }
  throw Error(name + ".dtype is " + dtype_name(dt) +
              "; expected float32, float16 or bfloat16 (int32 for cu_seqlens)");
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
             int num_threads) {
  flashvision::ForwardArgs args;
  Options{scale,        causal, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
          max_seqlen_k, stream, backend,      num_threads}
      .apply(args);
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

std::vector<std::string> compiled_backend_names() {
  std::vector<std::string> names;
  for (Backend b : flashvision::compiled_backends()) names.emplace_back(flashvision::to_string(b));
  return names;
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "flashvision's C++ core over DLPack (use the functions of the flashvision package)";
  m.attr("__version__") = flashvision::kVersion;
  nb::exception<Error>(m, "Error", PyExc_ValueError);

  m.def("forward", &forward, nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"),
        nb::arg("lse").none() = nb::none(), nb::kw_only(), nb::arg("scale") = 0.0f,
        nb::arg("causal") = false, nb::arg("cu_seqlens_q").none() = nb::none(),
        nb::arg("cu_seqlens_k").none() = nb::none(), nb::arg("max_seqlen_q") = 0,
        nb::arg("max_seqlen_k") = 0, nb::arg("stream") = 0, nb::arg("backend") = "automatic",
        nb::arg("num_threads") = 0,
        "Writes out (and lse) for q [B, Nq, H, D] (or packed [total_q, H, D] with cu_seqlens); "
        "scale 0 means 1/sqrt(D); stream is a cudaStream_t as an int.");
  m.def("backward", &backward, nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"),
        nb::arg("out"), nb::arg("lse"), nb::arg("dq"), nb::arg("dk"), nb::arg("dv"), nb::kw_only(),
        nb::arg("scale") = 0.0f, nb::arg("causal") = false,
        nb::arg("cu_seqlens_q").none() = nb::none(), nb::arg("cu_seqlens_k").none() = nb::none(),
        nb::arg("max_seqlen_q") = 0, nb::arg("max_seqlen_k") = 0, nb::arg("deterministic") = false,
        nb::arg("stream") = 0, nb::arg("backend") = "automatic", nb::arg("num_threads") = 0,
        "Writes dq, dk, dv from the forward call's q, k, v, out, lse and dout.");
  m.def(
      "kernel_name",
      [](const std::string& backend) { return flashvision::kernel_name(to_backend(backend)); },
      nb::arg("backend"), "Name of the implementation behind a backend on this machine.");
  m.def("compiled_backends", &compiled_backend_names, "Backends compiled into this build.");
  m.def("describe_devices", &flashvision::describe_devices,
        "One line per device flashvision can run on.");
}
