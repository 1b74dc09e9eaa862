// flashvision: exact, IO-aware attention for image models. The one header users include.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "flashvision/args.h"
#include "flashvision/error.h"
#include "flashvision/tensor.h"
#include "flashvision/version.h"

namespace flashvision {

/// Computes attention forward. Validates every argument first and throws flashvision::Error
/// naming the offending argument; on CUDA tensors the work is queued on args.stream.
void forward(const ForwardArgs& args);

/// Computes dq, dk, dv from the forward call's inputs, output, lse and dout. Throws
/// flashvision::Error on invalid arguments.
void backward(const BackwardArgs& args);

/// Bytes of workspace backward(args) needs (BackwardArgs::workspace): 0 on the CPU, and for CUDA
/// tensors what the call would allocate itself. Validates args as backward() does (workspace
/// itself aside).
std::size_t backward_workspace_size(const BackwardArgs& args);

/// The backend forward() would run for these arguments (after validation).
Backend selected_backend(const ForwardArgs& args);
/// The backend backward() would run for these arguments (after validation).
Backend selected_backend(const BackwardArgs& args);

/// A short name of the implementation behind a backend on this machine, e.g. "cpu-avx2".
std::string kernel_name(Backend backend);

/// The kernel forward() would run for these arguments: kernel_name(selected_backend(args)), except
/// where the backend picks its kernel by the call (the CPU's AMX forward for bf16, "cpu-amx").
std::string selected_kernel(const ForwardArgs& args);

/// Name of a backend ("cpu", "cuda-sm80", ...).
const char* to_string(Backend backend) noexcept;

/// Backends compiled into this library.
std::vector<Backend> compiled_backends();

/// One line per device the library can run on (CPU features, GPUs found).
std::vector<std::string> describe_devices();

}  // namespace flashvision
