// Entry points of the CUDA backends for the dispatcher: the portable sm80 path (mma.sync, forward
// and backward) and the Hopper path (sm90: the forward, and the backward's main kernel).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "api/problem.h"

namespace flashvision::detail {

/// Queues the forward pass on p.stream. Precondition: cuda_supports(p, false) (the dispatcher
/// checks it once per call); throws flashvision::Error when a CUDA call fails.
void cuda_forward(const Problem& p);
/// Queues the backward pass on p.stream (workspace is stream-ordered), its main kernel on the
/// Hopper path when `sm90`. Precondition: cuda_supports(p, true), and
/// cuda_sm90_backward_supports(p) when `sm90`; throws flashvision::Error when a CUDA call fails.
void cuda_backward(const Problem& p, bool sm90);
/// Bytes of workspace cuda_backward(p, sm90) uses (p.workspace must hold at least that many).
std::size_t cuda_backward_workspace_bytes(const Problem& p, bool sm90);
/// Whether the sm80 path runs this problem (dtype, head dim: up to 256 in the forward, 512 in the
/// backward, alignment, device: the backward of bucket 512 needs Hopper's shared memory); `why`
/// says why not.
bool cuda_supports(const Problem& p, bool backward, std::string* why);
/// Whether the Hopper forward (sm90: TMA, wgmma, warp specialization) runs this problem: a build
/// with sm_90a code, a compute capability 9.0 device, f16/bf16, head dim up to 512 and operands
/// TMA can address; `why` says why not.
bool cuda_sm90_supports(const Problem& p, std::string* why);
/// Queues the Hopper forward on p.stream. Precondition: cuda_sm90_supports(p).
void cuda_forward_sm90(const Problem& p);
/// Whether the Hopper backward main kernel runs this problem: what the sm80 backward needs, a
/// build with its bucket (head dims up to 128), not deterministic, a compute capability
/// 9.0 device and operands TMA can address; `why` says why not.
bool cuda_sm90_backward_supports(const Problem& p, std::string* why);
/// Whether automatic dispatch takes the Hopper backward: it supports the problem and the grid
/// is large enough that the sm80 backward would not split its query blocks.
bool cuda_sm90_backward_preferred(const Problem& p);
/// One line per GPU found; empty when there is none or no driver (never throws).
std::vector<std::string> cuda_device_descriptions();
/// Number of CUDA devices (0 when there is no driver or device).
int cuda_device_count() noexcept;

}  // namespace flashvision::detail
