// The forwards' tile numbering, shared by the sm80 and sm90 kernels and the combine of their split
// tiles (fwd_combine.h), which must agree on it.
#pragma once

namespace flashvision::detail {

/// Where tile `tile` of a forward's schedule lies: its slice of V and O's columns, its query block
/// and its (sequence, head) pair, sequence-major.
struct FwdTilePlace {
  int slice;
  int m_block;
  int bh;
};

/// The slices of one query block are adjacent (they read the same Q and K blocks), and the query
/// blocks of one (sequence, head) run from the last down: under the causal mask the longest first.
__device__ __forceinline__ FwdTilePlace fwd_tile_place(int tile, int num_m_blocks,
                                                       int value_slices) {
  const int block = tile / value_slices;
  return {tile % value_slices, num_m_blocks - 1 - block % num_m_blocks, block / num_m_blocks};
}

}  // namespace flashvision::detail
