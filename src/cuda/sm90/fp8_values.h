// V of the FP8 forward, transposed for O += P V. The e4m3 wgmma reads both of its shared-memory
// operands K-major (it has no transposed form), so P V needs each V block as [D][keys]: panels of
// kValuePanelKeys keys, each panel D rows of its keys under the swizzle of that many bytes, and
// within each 32 keys in the order in which P's A fragments hold them (p_fragments.cuh), so that
// the GEMM pairs each probability with its own key's values. Two ways write it
// (FwdParams::fp8_values_transposed): the kernel's transposing warps, from each block as it lies
// (fwd_value_transposer.cuh), or a pass over V before the kernel into a workspace of the same
// panels, contiguous (transpose_fp8_values), which the producer then loads with TMA. The pass
// moves V through device memory twice, once a call; the kernel's warps transpose each block once
// for each query tile that reads it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/common/host_device.h"

namespace flashvision::detail::sm90 {

/// The key that position `position` (0..31) of a 32-key group of the transposed V holds: the
/// thread of P's fragments that holds byte 4t + j of the group's first or second 16 has the
/// accumulator's columns 2t, 2t + 1 of the 8-column tiles 0 and 1 (or 2 and 3) of the group.
FLASHVISION_HOST_DEVICE constexpr int fp8_key_at(int position) {
  const int t = (position % 16) / 4, j = position % 4;
  return 16 * (position / 16) + 8 * (j / 2) + 2 * t + j % 2;
}

/// An e4m3 V of `seqs` sequences of `keys` rows, `heads` kv heads of `head_dim` columns, addressed
/// by element (= byte) strides, and the keys of its transposed panels (a multiple of 32).
struct Fp8Values {
  const void* data = nullptr;
  int64_t seq_stride = 0, row_stride = 0, head_stride = 0;
  int64_t seqs = 0, keys = 0, heads = 0, head_dim = 0;
  int64_t panel_keys = 128;
};

/// Panels of the transposed V of one (sequence, kv head).
FLASHVISION_HOST_DEVICE constexpr int64_t fp8_value_panels(const Fp8Values& v) {
  return (v.keys + v.panel_keys - 1) / v.panel_keys;
}

/// Bytes of the transposed V: [seqs][heads][panels][head_dim][panel_keys].
constexpr std::size_t fp8_transposed_bytes(const Fp8Values& v) {
  return static_cast<std::size_t>(v.seqs * v.heads * fp8_value_panels(v) * v.head_dim *
                                  v.panel_keys);
}

/// Whether transpose_fp8_values can launch for `v`: a block per 32 keys (grid x), kv head (y) and
/// sequence (z).
constexpr bool fp8_values_pass_fits(const Fp8Values& v) {
  return v.heads <= 65535 && v.seqs <= 65535 && (v.keys + 31) / 32 <= INT32_MAX;
}

/// Queues the transposition of `v` into `transposed` (fp8_transposed_bytes, 16-byte aligned) on
/// `stream` (a cudaStream_t).
void transpose_fp8_values(const Fp8Values& v, void* transposed, void* stream);

}  // namespace flashvision::detail::sm90
