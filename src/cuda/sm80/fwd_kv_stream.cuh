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

/// Copies kRows x kCols tiles into shared memory unpadded and XOR-swizzled (as TileStream with
/// kSwizzled) the way FA2 copies: 8 threads per 128-byte line of a row, thread t the chunk t % 8
/// of each of the row's kCols / 64 lines, in every (kThreads / 8)-th row. One row pointer serves a
/// row's kCols / 64 copies through the copy's immediate offset, and a full tile (every tile but a
/// sequence's last where the head dim fills the bucket) copies unpredicated from real addresses:
/// 16 copies a thread at D = 256 cost 16 instructions and 4 pointer steps instead of the select
/// pair, 64-bit add and compare per copy of TileStream, whose rewritten address registers had
/// to wait for the copy before to read them (long-scoreboard stalls on the H200).
template <typename T, int kRows, int kCols, int kThreads>
struct LineTileStream {
  static constexpr int kLines = kCols / 64;
  static constexpr int kRowsPerPass = kThreads / 8;
  static constexpr int kPasses = kRows / kRowsPerPass;
  // kRowsPerPass % 8 == 0 keeps a thread's row % 8, and with it its swizzled chunk, the same in
  // every pass.
  static_assert(kCols % 64 == 0 && kThreads % 64 == 0 && kRows % kRowsPerPass == 0,
                "whole lines, whole passes, 8-row passes");

  /// Queues the copy of the tile whose row 0 is at `gmem`; all kThreads threads take part.
  /// `mapped`: a mapped address that the zero-filled chunks of a partial tile name.
  __device__ __forceinline__ static void load(uint32_t smem_tile, const T* gmem,
                                              int64_t row_stride, int rows_valid, int cols_valid,
                                              const void* mapped) {
    const int t = static_cast<int>(threadIdx.x);
    const int row = t / 8, chunk = t % 8;
    const uint32_t dst =
        smem_tile + 2u * static_cast<uint32_t>(row * kCols + (chunk ^ (row & 7)) * 8);
    const T* src = gmem + row * row_stride + chunk * 8;
    const int64_t step = kRowsPerPass * row_stride;
    if (rows_valid >= kRows && cols_valid >= kCols) {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
#pragma unroll
        for (int j = 0; j < kLines; ++j) {
          ptx::cp_async_16(dst + 2u * static_cast<uint32_t>(i * kRowsPerPass * kCols + j * 64),
                           src + j * 64);
        }
        src += step;
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const bool row_valid = row + i * kRowsPerPass < rows_valid;
#pragma unroll
      for (int j = 0; j < kLines; ++j) {
        const bool valid = row_valid && chunk * 8 + j * 64 < cols_valid;
        ptx::cp_async_16(dst + 2u * static_cast<uint32_t>(i * kRowsPerPass * kCols + j * 64),
                         valid ? static_cast<const void*>(src + j * 64) : mapped, valid);
      }
      src += step;
    }
  }
};

}  // namespace flashvision::detail::sm80
