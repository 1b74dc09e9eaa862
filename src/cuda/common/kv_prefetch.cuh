// The forward's L2 prefetch of K and V. A CTA walks its key blocks one after another with a copy
// that is in flight for about half a block's work; where the keys are not in L2 (a problem's
// first touch of them), every block's copy waits on device memory, and on a grid of one wave
// (SD 1.5's 32 x 32 level: 128 CTAs of 16 key blocks) that latency, paid per block, was a third
// of the kernel. So the CTAs that share a head's keys first ask L2 for them, each for its own
// slice: the whole head's K and V are then requested at once, and the block copies hit L2.
#pragma once

#include <cstdint>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail {

/// Asks L2 for `rows` rows of `row_elems` elements of T, `row_stride` elements apart from `first`,
/// split over `threads` threads of which this is `thread`. Each row is prefetched at every 128
/// bytes from its start and at its last byte, so that the lines of a row that does not start on a
/// line are all asked for.
template <typename T>
__device__ __forceinline__ void prefetch_rows_l2(const T* first, int64_t row_stride, int rows,
                                                 int row_elems, int thread, int threads) {
  const int row_bytes = row_elems * static_cast<int>(sizeof(T));
  const int points = (row_bytes + 127) / 128 + 1;
  for (int i = thread; i < rows * points; i += threads) {
    const int row = i / points, point = i % points;
    const int byte = point * 128 < row_bytes ? point * 128 : row_bytes - 1;
    ptx::prefetch_l2(reinterpret_cast<const unsigned char*>(first + row * row_stride) + byte);
  }
}

/// The slice `slice` of `sharers` equal slices of `keys` keys: its first key and its count.
struct KeySlice {
  int first;
  int count;
};

__device__ __forceinline__ KeySlice key_slice(int keys, int slice, int sharers) {
  const int per = (keys + sharers - 1) / sharers;
  const int first = slice * per < keys ? slice * per : keys;
  return {first, (keys - first < per ? keys - first : per)};
}

}  // namespace flashvision::detail
