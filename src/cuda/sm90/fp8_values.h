// V of the FP8 forward, transposed for O += P V. The e4m3 wgmma reads both of its shared-memory
// operands K-major (it has no transposed form), so P V needs V as [D][keys]: before the forward,
// each (sequence, kv head) of V [keys][D] is written to a workspace as panels of `panel_keys`
// keys, each panel D rows of its keys, zero keys padding the last; within each 32 keys in the
// order in which P's A fragments hold them (p_fragments.cuh), so that the GEMM pairs each
// probability with its own key's values. A panel is the box of one TMA load, contiguous in
// memory (rows of all keys, padded or not, timed the same on the H200: perf-notes, session 28).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/common/host_device.h"

namespace flashvision::detail::sm90 {

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

/// The key that position `position` (0..31) of a 32-key group of the transposed V holds: the
/// thread of P's fragments that holds byte 4t + j of the group's first or second 16 has the
/// accumulator's columns 2t, 2t + 1 of the 8-column tiles 0 and 1 (or 2 and 3) of the group.
FLASHVISION_HOST_DEVICE constexpr int fp8_key_at(int position) {
  const int t = (position % 16) / 4, j = position % 4;
  return 16 * (position / 16) + 8 * (j / 2) + 2 * t + j % 2;
}

/// Queues the transposition of `v` into `transposed` (fp8_transposed_bytes, 16-byte aligned) on
/// `stream` (a cudaStream_t).
void transpose_fp8_values(const Fp8Values& v, void* transposed, void* stream);

}  // namespace flashvision::detail::sm90
