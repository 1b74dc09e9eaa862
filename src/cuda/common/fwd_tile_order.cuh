// The forwards' tile numbering, shared by the sm80 and sm90 kernels and the combine of their split
// tiles (fwd_combine.h), which must agree on it.
#pragma once

#include "cuda/common/fast_divisor.h"

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

/// The same place with the query-block count as a FastDivisor (the persistent sm90 forward, which
/// places a tile every few microseconds on short sequences); the same numbering as above.
__device__ __forceinline__ FwdTilePlace fwd_tile_place(int tile, const FastDivisor& num_m_blocks,
                                                       int value_slices) {
  const int block = tile / value_slices;
  const int bh = num_m_blocks.quotient(block);
  return {tile % value_slices, num_m_blocks.divisor() - 1 - num_m_blocks.remainder(block, bh), bh};
}

}  // namespace flashvision::detail
