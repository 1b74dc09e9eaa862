// The AMX-BF16 forward for bf16 inputs (amx_forward.cpp), and when a call runs it.
#pragma once

#include "api/problem.h"
#include "cpu/amx_kernels.h"

namespace flashvision::detail::cpu {

/// The AMX steps a forward call runs, or nullptr for the fp32 forward of forward.cpp.
/// FLASHVISION_CPU_AMX (read on every call; throws flashvision::Error on a bad value):
/// "auto" or unset: the real tiles for bf16 inputs where the CPU has AMX-BF16 (with AVX-512 and
/// AVX512_BF16), the kernel grants the tile state and FLASHVISION_CPU_ISA does not force a kernel
/// set; "0": never; "1": for bf16 inputs always, emulated where the real tiles are unavailable.
/// Either way a problem whose packed K/V would overflow the per-thread budget keeps the fp32
/// forward.
const AmxKernels* amx_forward_kernels(const Problem& problem);

/// Whether the packed K and V of the longest key sequence fit the per-thread budget of the AMX
/// forward (it keeps one (sequence, kv head) packed per thread).
bool amx_forward_fits(const Problem& problem);

/// Whether this CPU and process can run the real tile instructions (checked once).
bool amx_native_available();

/// The forward of forward.cpp's contract with AMX tiles: bf16 Q K^T and P V, fp32 softmax.
void cpu_amx_forward(const Problem& problem, const AmxKernels& kernels);

}  // namespace flashvision::detail::cpu
