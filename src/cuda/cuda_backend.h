// Entry points of the CUDA backend (the portable sm80 path, mma.sync) for the dispatcher.
#pragma once

#include <string>
#include <vector>

#include "api/problem.h"

namespace flashvision::detail {

/// Queues the forward pass on p.stream. Precondition: cuda_supports(p, false) (the dispatcher
/// checks it once per call); throws flashvision::Error when a CUDA call fails.
void cuda_forward(const Problem& p);
/// Queues the backward pass on p.stream (workspace is stream-ordered). Precondition:
/// cuda_supports(p, true); throws flashvision::Error when a CUDA call fails.
void cuda_backward(const Problem& p);
/// Whether the sm80 path runs this problem (dtype, head dim, alignment, device); `why` says why
/// not.
bool cuda_supports(const Problem& p, bool backward, std::string* why);
/// Name of the kernel family that runs `p` (or that would run, when p is null): "sm80".
std::string cuda_kernel_name(const Problem* p);
/// One line per GPU found; empty when there is none or no driver (never throws).
std::vector<std::string> cuda_device_descriptions();
/// Number of CUDA devices (0 when there is no driver or device).
int cuda_device_count() noexcept;

}  // namespace flashvision::detail
