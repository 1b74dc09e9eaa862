// V of the FP8 forward, transposed for O += P V. The e4m3 wgmma reads both of its shared-memory
// operands K-major (it has no transposed form), so P V needs each V block as [D][keys]: the
// kernel's transposing warps (fwd_value_transposer.cuh) write a V stage as panels of
// kValuePanelKeys keys, each panel D rows of its keys under the swizzle of that many bytes, and
// within each 32 keys in the order in which P's A fragments hold them (p_fragments.cuh), so that
// the GEMM pairs each probability with its own key's values.
#pragma once

#include "cuda/common/host_device.h"

namespace flashvision::detail::sm90 {

/// The key that position `position` (0..31) of a 32-key group of the transposed V holds: the
/// thread of P's fragments that holds byte 4t + j of the group's first or second 16 has the
/// accumulator's columns 2t, 2t + 1 of the 8-column tiles 0 and 1 (or 2 and 3) of the group.
FLASHVISION_HOST_DEVICE constexpr int fp8_key_at(int position) {
  const int t = (position % 16) / 4, j = position % 4;
  return 16 * (position / 16) + 8 * (j / 2) + 2 * t + j % 2;
}

}  // namespace flashvision::detail::sm90
