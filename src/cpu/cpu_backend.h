// Entry points of the CPU backend.
#pragma once

#include <string>

#include "api/problem.h"

namespace flashvision::detail {

/// Forward on host memory: writes out (and lse when requested). f8e4m3 inputs go to
/// cpu_fp8_forward.
void cpu_forward(const Problem& problem);
/// The f8e4m3 forward (dense): the inputs decoded to float32 for cpu_forward, O rounded to bf16.
void cpu_fp8_forward(const Problem& problem);
/// Backward on host memory: writes dq, dk, dv.
void cpu_backward(const Problem& problem);
/// Name of the micro-kernel set chosen for this CPU ("cpu-avx512", "cpu-avx2", "cpu-portable").
std::string cpu_kernel_name();
/// Name of the kernel cpu_forward runs for `problem`: "cpu-amx" (or "cpu-amx-emulated") where
/// the AMX forward takes bf16 inputs, else cpu_kernel_name().
std::string cpu_forward_kernel_name(const Problem& problem);
/// One line describing this CPU (model, threads, SIMD features used).
std::string cpu_description();

}  // namespace flashvision::detail
