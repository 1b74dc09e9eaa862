// The forward's block sizes as FLASHVISION_CPU_FWD_BLOCKS asks for them: a tuning knob, so that
// tile sizes can be measured on a CPU without rebuilding.
#pragma once

#include "cpu/tiling.h"

namespace flashvision::detail::cpu {

/// `chosen`, or the blocks FLASHVISION_CPU_FWD_BLOCKS="Q,K" sets (query rows a multiple of 16,
/// keys a multiple of 8, both up to 1024); throws Error naming the variable when it is malformed.
Tiling forward_tiling_override(const Tiling& chosen);

}  // namespace flashvision::detail::cpu
