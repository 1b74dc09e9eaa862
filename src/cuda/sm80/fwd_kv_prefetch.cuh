// The sm80 forward's L2 prefetch of K and V. A CTA walks its key blocks one after another, each
// block's copy in flight for about half a block's work; where the keys are not in L2 (a problem's
// first touch of them, as when a benchmark flushes L2 between calls), every copy waits on device
// memory, and where the grid is a single wave nothing else on the SM hides that wait (SD 1.5's
// 32 x 32 level: 128 CTAs of 16 key blocks, 39.8 us with L2 flushed against 28.1 warm). So the
// CTAs that share a head's keys first ask L2 for them, each for its own slice: all of the head's
// K and V are requested at once and the block copies then hit L2 (34.0 us; H200,
// bench/results/2026-11-30-s16). Where it did not pay (grids of several waves, short key walks,
// and the Hopper forward, whose producer it delayed), the host leaves it off (cuda_backend.cpp).
#pragma once

#include <cstdint>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail::sm80 {

/// Asks L2 for `rows` rows of `row_elems` (at most kMaxRowElems) elements of T, `row_stride`
/// elements apart from `first`, split over kThreads threads of which this is `thread`. Each row
/// is prefetched every 128 bytes from its start and at its last byte, so that all the lines of a
/// row that does not start on a line are asked for.
template <typename T, int kMaxRowElems, int kThreads>
__device__ __forceinline__ void prefetch_rows_l2(const T* first, int64_t row_stride, int rows,
                                                 int row_elems, int thread) {
  constexpr int kPoints = (kMaxRowElems * static_cast<int>(sizeof(T)) + 127) / 128 + 1;
  const int last_byte = row_elems * static_cast<int>(sizeof(T)) - 1;
  for (int i = thread; i < rows * kPoints; i += kThreads) {
    const int row = i / kPoints, byte = min(i % kPoints * 128, last_byte);
    ptx::prefetch_l2(reinterpret_cast<const unsigned char*>(first + row * row_stride) + byte);
  }
}

/// The first key and the count of slice `slice` of `sharers` equal slices of `keys` keys.
struct KeySlice {
  int first;
  int count;
};

__device__ __forceinline__ KeySlice key_slice(int keys, int slice, int sharers) {
  const int per = (keys + sharers - 1) / sharers;
  const int first = min(slice * per, keys);
  return {first, min(keys - first, per)};
}

}  // namespace flashvision::detail::sm80
