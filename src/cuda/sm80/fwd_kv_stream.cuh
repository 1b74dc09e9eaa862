// Streaming K and V tiles of the sm80 forward into shared memory with cp.async, cheaply in
// registers: each thread owns one 16-byte column chunk of every kRowsPerPass-th row, so its whole
// state is one source pointer advanced by one step. (A per-chunk address table, what
// load_tile_async becomes once the compiler hoists it out of the key loop, costs 2 registers per
// chunk: with kBlockN = 64 that alone pushed the forward past 255 registers into spills.)
#pragma once

#include <cstdint>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail::sm80 {

/// Copies kRows x kCols tiles (rows `row_stride` apart in global memory) into shared memory with
/// row pitch kCols + 8; rows >= rows_valid and columns >= cols_valid are zero-filled unread.
template <typename T, int kRows, int kCols, int kThreads>
struct TileStream {
  static constexpr int kChunksPerRow = kCols / 8;
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPasses = (kRows + kRowsPerPass - 1) / kRowsPerPass;
  static constexpr bool kAllThreads = kRowsPerPass * kChunksPerRow == kThreads;
  static_assert(kRowsPerPass >= 1, "a pass must cover at least one row");

  /// Queues the copy of the tile whose row 0 is at `gmem`; all kThreads threads take part.
  __device__ __forceinline__ static void load(uint32_t smem_tile, const T* gmem,
                                              int64_t row_stride, int rows_valid, int cols_valid,
                                              const void* mapped) {
    const int t = static_cast<int>(threadIdx.x);
    if (!kAllThreads && t >= kRowsPerPass * kChunksPerRow) return;
    const int row = t / kChunksPerRow, col = (t % kChunksPerRow) * 8;
    const bool col_valid = col < cols_valid;
    const uint32_t dst = smem_tile + 2u * static_cast<uint32_t>(row * (kCols + 8) + col);
    const T* src = gmem + row * row_stride + col;
    const int64_t step = kRowsPerPass * row_stride;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = row + i * kRowsPerPass;
      if ((i + 1) * kRowsPerPass <= kRows || r < kRows) {
        const bool valid = col_valid && r < rows_valid;
        ptx::cp_async_16(dst + 2u * static_cast<uint32_t>(i * kRowsPerPass * (kCols + 8)),
                         valid ? static_cast<const void*>(src) : mapped, valid);
      }
      src += step;
    }
  }
};

}  // namespace flashvision::detail::sm80
