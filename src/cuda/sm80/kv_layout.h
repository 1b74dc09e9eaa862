// Which K/V shared-memory layout the sm80 forward takes by default (params.h's FwdKvMode): a
// host-side rule apart from the kernels' tile_config.h, so that it can be unit-tested without a
// GPU.
#pragma once

#include "cuda/sm80/tile_config.h"

namespace flashvision::detail::sm80 {

/// Whether the forward takes the swizzled K/V layout by default on a device of compute capability
/// `major`.x: wherever it fits (H200: D = 64 +1-2 %, 128 +6-8 %, 256 +8-12 %), except bucket 64's
/// 128 x 128 tile before Hopper: compiled for sm_80 it spills 76 bytes swizzled against 8 padded
/// (ptxas), and no such GPU was at hand to measure which is faster.
constexpr bool fwd_kv_swizzle_default(int head_dim, int variant, int major) {
  return fwd_kv_swizzle_fits(head_dim, variant) && !(head_dim == 64 && variant == 1 && major < 9);
}

}  // namespace flashvision::detail::sm80
