// Entry points: validate once, pick a backend, run it.
#include <string>
#include <vector>

#include "api/cuda_refusal.h"
#include "api/env_option.h"
#include "api/problem.h"
#include "cpu/cpu_backend.h"
#include "flashvision/flashvision.h"
#ifdef FLASHVISION_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace flashvision {
namespace {

using detail::Problem;

#ifndef FLASHVISION_HAVE_CUDA
[[noreturn]] void no_cuda() {
  throw Error(
      "the tensors are on cuda but this build of flashvision has no CUDA backend "
      "(rebuild with FLASHVISION_CUDA=ON)");
}
#endif

/// Resolves Backend::automatic and checks that a forced backend fits the tensors.
Backend choose_backend(const Problem& p, Backend requested, bool backward) {
  if (p.device == Device::cpu) {
    if (requested != Backend::automatic && requested != Backend::cpu) {
      throw Error(std::string("backend is ") + to_string(requested) +
                  " but the tensors are on cpu; expected backend cpu or automatic");
    }
    return Backend::cpu;
  }
  if (requested == Backend::cpu) {
    throw Error("backend is cpu but the tensors are on cuda; expected a CUDA backend or automatic");
  }
#ifdef FLASHVISION_HAVE_CUDA
  // FLASHVISION_CUDA_KERNEL turns an automatic call into a forced one, so that benchmarks and
  // tests reach one kernel through entry points that always ask for the automatic backend (the
  // Python package's).
  std::string forced_by = "backend is ";
  if (requested == Backend::automatic) {
    requested = static_cast<Backend>(detail::env_choice(
        "FLASHVISION_CUDA_KERNEL",
        {{"auto", static_cast<int>(Backend::automatic)},
         {"sm80", static_cast<int>(Backend::cuda_sm80)},
         {"sm90", static_cast<int>(Backend::cuda_sm90)}},
        static_cast<int>(Backend::automatic), "auto, sm80 or sm90"));
    forced_by = "FLASHVISION_CUDA_KERNEL asks for ";
  }
  std::string why;
  if (requested == Backend::cuda_sm90) {
    const bool supported = backward ? detail::cuda_sm90_backward_supports(p, &why)
                                    : detail::cuda_sm90_supports(p, &why);
    if (!supported) throw Error(forced_by + "cuda-sm90 but " + why);
    return Backend::cuda_sm90;
  }
  // The Hopper kernels where they apply (and, in the backward, where the grid is large enough for
  // them); the portable path for the rest.
  std::string sm90_why;
  if (requested == Backend::automatic && (backward ? detail::cuda_sm90_backward_preferred(p)
                                                   : detail::cuda_sm90_supports(p, &sm90_why))) {
    return Backend::cuda_sm90;
  }
  if (!detail::cuda_supports(p, backward, &why)) {
    // Forward head dims above 256 and f8e4m3 inputs only the Hopper forward serves: say why it
    // refused (e.g. a head dim FP8 does not take, a build without bucket 512, or a GPU other than
    // compute capability 9.0).
    why = detail::cuda_refusal(p.dtype, p.head_dim, why, sm90_why);
    if (requested == Backend::cuda_sm80) why = forced_by + "cuda-sm80 but " + why;
    throw Error(why);
  }
  return Backend::cuda_sm80;
#else
  (void)backward;
  no_cuda();
#endif
}

void run_forward(const Problem& p, Backend backend) {
  if (backend == Backend::cpu) return detail::cpu_forward(p);
#ifdef FLASHVISION_HAVE_CUDA
  if (backend == Backend::cuda_sm90) return detail::cuda_forward_sm90(p);
  return detail::cuda_forward(p);
#else
  no_cuda();
#endif
}

void run_backward(const Problem& p, Backend backend) {
  if (backend == Backend::cpu) return detail::cpu_backward(p);
#ifdef FLASHVISION_HAVE_CUDA
  return detail::cuda_backward(p, backend == Backend::cuda_sm90);
#else
  no_cuda();
#endif
}

}  // namespace

void forward(const ForwardArgs& args) {
  const Problem p = detail::make_forward_problem(args);
  run_forward(p, choose_backend(p, args.backend, false));
}

void backward(const BackwardArgs& args) {
  const Problem p = detail::make_backward_problem(args);
  run_backward(p, choose_backend(p, args.backend, true));
}

std::size_t backward_workspace_size(const BackwardArgs& args) {
  const Problem p = detail::make_backward_problem(args);
  const Backend backend = choose_backend(p, args.backend, true);
  if (backend == Backend::cpu) return 0;
#ifdef FLASHVISION_HAVE_CUDA
  return detail::cuda_backward_workspace_bytes(p, backend == Backend::cuda_sm90);
#else
  no_cuda();
#endif
}

Backend selected_backend(const ForwardArgs& args) {
  return choose_backend(detail::make_forward_problem(args), args.backend, false);
}

Backend selected_backend(const BackwardArgs& args) {
  return choose_backend(detail::make_backward_problem(args), args.backend, true);
}

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic: return "automatic";
    case Backend::cpu: return "cpu";
    case Backend::cuda_sm80: return "cuda-sm80";
    case Backend::cuda_sm90: return "cuda-sm90";
  }
  return "unknown-backend";
}

std::string kernel_name(Backend backend) {
  switch (backend) {
    case Backend::cpu: return detail::cpu_kernel_name();
#ifdef FLASHVISION_HAVE_CUDA
    case Backend::cuda_sm80: return "sm80";
#ifdef FLASHVISION_HAVE_SM90
    case Backend::cuda_sm90: return "sm90";
#endif
#endif
    default: return "unavailable";
  }
}

std::string selected_kernel(const ForwardArgs& args) {
  const Problem p = detail::make_forward_problem(args);
  const Backend backend = choose_backend(p, args.backend, false);
  if (backend == Backend::cpu) return detail::cpu_forward_kernel_name(p);
  return kernel_name(backend);
}

std::vector<Backend> compiled_backends() {
  std::vector<Backend> backends{Backend::cpu};
#ifdef FLASHVISION_HAVE_CUDA
  backends.push_back(Backend::cuda_sm80);
#endif
#ifdef FLASHVISION_HAVE_SM90
  backends.push_back(Backend::cuda_sm90);
#endif
  return backends;
}

std::vector<std::string> describe_devices() {
  std::vector<std::string> lines{detail::cpu_description()};
#ifdef FLASHVISION_HAVE_CUDA
  const std::vector<std::string> gpus = detail::cuda_device_descriptions();
  if (gpus.empty()) lines.push_back("cuda: no GPU found");
  lines.insert(lines.end(), gpus.begin(), gpus.end());
#else
  lines.push_back("cuda: not compiled in");
#endif
  return lines;
}

}  // namespace flashvision
