// Moving tiles between global and shared memory, and the per-sequence row ranges they are cut from.
// Every access is clamped to the rows of its sequence and the real head dim: rows past the end are
// zero-filled on load and never written on store.
#pragma once

#include <cstdint>

#include "cuda/common/ptx.cuh"
#include "cuda/sm80/params.h"

namespace flashvision::detail {

/// Rows of one sequence: where they start in the tensors and how many there are.
struct SeqRange {
  int64_t q_begin;   ///< first q row (0 in dense mode; the sequence offset is separate there)
  int q_len;
  int64_t k_begin;
  int k_len;
  int64_t q_ws_row;  ///< first row of this sequence in the per-head fp32 workspaces
};

/// Row range of sequence `b`. In varlen mode the offsets are read from device memory that the
/// host could not validate, so they are clamped to [0, total) before use.
__device__ __forceinline__ SeqRange seq_range(const sm80::ShapeParams& s, int b) {
  if (s.cu_seqlens_q == nullptr) {
    return {0, s.seqlen_q, 0, s.seqlen_k, static_cast<int64_t>(b) * s.seqlen_q};
  }
  auto clamp = [](int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); };
  const int64_t q0 = clamp(s.cu_seqlens_q[b], 0, s.total_q);
  const int64_t q1 = clamp(s.cu_seqlens_q[b + 1], q0, s.total_q);
  const int64_t k0 = clamp(s.cu_seqlens_k[b], 0, s.total_k);
  const int64_t k1 = clamp(s.cu_seqlens_k[b + 1], k0, s.total_k);
  return {q0, static_cast<int>(q1 - q0), k0, static_cast<int>(k1 - k0), q0};
}

/// Element pointer of (sequence, row, head) of an operand.
template <typename T>
__device__ __forceinline__ T* operand_at(const sm80::TensorParams& t, int64_t seq, int64_t row,
                                         int64_t head) {
  return static_cast<T*>(t.data) + seq * t.seq_stride + row * t.row_stride + head * t.head_stride;
}

/// Asynchronously copies a kRows x kCols tile (rows `row_stride` apart in global memory) into
/// shared memory with row pitch padded(kCols); rows >= rows_valid and columns >= cols_valid are
/// zero-filled without being read. All kThreads threads of the CTA take part.
template <typename T, int kRows, int kCols, int kThreads>
__device__ __forceinline__ void load_tile_async(T* smem, const T* gmem, int64_t row_stride,
                                                int rows_valid, int cols_valid, const void* mapped) {
  constexpr int kChunksPerRow = kCols / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  const uint32_t smem_base = ptx::smem_addr(smem);
#pragma unroll
  for (int i = 0; i < (kChunks + kThreads - 1) / kThreads; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * kThreads;
    if (kChunks % kThreads == 0 || chunk < kChunks) {
      const int row = chunk / kChunksPerRow;
      const int col = (chunk % kChunksPerRow) * 8;
      const bool valid = row < rows_valid && col < cols_valid;
      const void* src = valid ? static_cast<const void*>(gmem + row * row_stride + col) : mapped;
      ptx::cp_async_16(smem_base + 2u * static_cast<uint32_t>(row * (kCols + 8) + col), src,
                       valid);
    }
  }
}

/// Copies `rows` x kCols of a shared tile (pitch padded(kCols)) to global memory with 16-byte
/// stores, for rows < rows_valid and columns < cols_valid; `threads` threads starting at `first`.
template <typename T, int kCols>
__device__ __forceinline__ void store_tile(T* gmem, int64_t row_stride, const T* smem, int rows,
                                           int rows_valid, int cols_valid, int first, int threads) {
  constexpr int kChunksPerRow = kCols / 8;
  for (int chunk = first; chunk < rows * kChunksPerRow; chunk += threads) {
    const int row = chunk / kChunksPerRow;
    const int col = (chunk % kChunksPerRow) * 8;
    if (row < rows_valid && col < cols_valid) {
      *reinterpret_cast<uint4*>(gmem + row * row_stride + col) =
          *reinterpret_cast<const uint4*>(smem + row * (kCols + 8) + col);
    }
  }
}

}  // namespace flashvision::detail
