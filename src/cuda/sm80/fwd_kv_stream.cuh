// Streaming K and V tiles of the sm80 forward (and the backward's swizzled Q and dO tiles) into
// shared memory with cp.async, cheaply in registers: each thread owns one 16-byte column chunk of
// every kRowsPerPass-th row, so its whole state is one source pointer advanced by one step. (A
// per-chunk address table, what load_tile_async becomes once the compiler hoists it out of the key
// loop, costs 2 registers per chunk: with kBlockN = 64 that alone pushed the forward past 255
// registers into spills.)
#pragma once

#include <cstdint>

#include "cuda/common/ptx.cuh"

namespace flashvision::detail::sm80 {

/// Copies kRows x kCols tiles (rows `row_stride` apart in global memory) into shared memory with
/// row pitch kCols + 8, or with kSwizzled unpadded and XOR-swizzled as warp_gemm_swizzled.cuh
/// says (pitch kCols, chunk c of row r at chunk c ^ (r % 8)); rows >= rows_valid and columns >=
/// cols_valid are zero-filled unread.
template <typename T, int kRows, int kCols, int kThreads, bool kSwizzled = false>
struct TileStream {
  static constexpr int kChunksPerRow = kCols / 8;
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPasses = (kRows + kRowsPerPass - 1) / kRowsPerPass;
  static constexpr bool kAllThreads = kRowsPerPass * kChunksPerRow == kThreads;
  static constexpr int kPitch = kSwizzled ? kCols : kCols + 8;
  static_assert(kRowsPerPass >= 1, "a pass must cover at least one row");
  // Swizzled, a thread's row % 8 must follow from its first row at compile time, pass by pass:
  // constant for kRowsPerPass % 8 == 0, its bit 2 flipping every pass for kRowsPerPass % 8 == 4.
  static_assert(!kSwizzled || (kCols % 64 == 0 && kAllThreads && kRowsPerPass % 4 == 0),
                "the swizzled layout needs whole 128-byte lines and 4k rows per pass");

  /// Queues the copy of the tile whose row 0 is at `gmem`; all kThreads threads take part.
  __device__ __forceinline__ static void load(uint32_t smem_tile, const T* gmem,
                                              int64_t row_stride, int rows_valid, int cols_valid,
                                              const void* mapped) {
    const int t = static_cast<int>(threadIdx.x);
    if (!kAllThreads && t >= kRowsPerPass * kChunksPerRow) return;
    const int row = t / kChunksPerRow, col = (t % kChunksPerRow) * 8;
    const bool col_valid = col < cols_valid;
    const uint32_t dst = smem_tile + 2u * static_cast<uint32_t>(row * kPitch + col);
    const T* src = gmem + row * row_stride + col;
    const int64_t step = kRowsPerPass * row_stride;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = row + i * kRowsPerPass;
      if ((i + 1) * kRowsPerPass <= kRows || r < kRows) {
        const bool valid = col_valid && r < rows_valid;
        ptx::cp_async_16(dst + 2u * static_cast<uint32_t>(i * kRowsPerPass * kPitch) +
                             swizzle_bytes(row, col, i),
                         valid ? static_cast<const void*>(src) : mapped, valid);
      }
      src += step;
    }
  }

 private:
  /// What the swizzle adds to the unswizzled address of the chunk at (row + i * kRowsPerPass,
  /// col): its chunk moves from col / 8 to (col / 8) ^ (row % 8), within the row's 128-byte line.
  __device__ __forceinline__ static uint32_t swizzle_bytes(int row, int col, int i) {
    if constexpr (!kSwizzled) {
      return 0;
    } else {
      const int chunk = col / 8, flip = (row ^ (i * kRowsPerPass)) & 7;
      return 16u * static_cast<uint32_t>((chunk ^ flip) - chunk);
    }
  }
};

}  // namespace flashvision::detail::sm80
