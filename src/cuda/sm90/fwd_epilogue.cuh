// The epilogue of a consumer warp of the sm90 forward: its 16 rows of O, normalized, and their LSE.
// Where shared memory allows (fwd_traits.cuh, kEpiloguePanels), each warp passes O through a
// private staging buffer: stmatrix turns the accumulator layout (a quad of lanes per 8 columns of
// a row) into rows, so that the global stores are whole 16-byte chunks, consecutive lanes on
// consecutive chunks of a row, instead of 4-byte pieces that half-fill 32-byte sectors. The buffer
// belongs to one warp, so __syncwarp is all the ordering it needs and the other warps (and the
// ping-pong of the warpgroups) are left alone.
#pragma once

#include <cstdint>
#include <utility>

#include "cuda/common/ptx.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/ptx_sm90.cuh"

namespace flashvision::detail::sm90 {

/// Writes the LSE of this thread's two rows (one lane of each quad). Where a query block has
/// several value slices (above D = 256, and in a sliced tile) the first slice's tile writes it
/// (every slice computes the same scores).
__device__ __forceinline__ void store_lse(const FwdParams& p, const WorkTile& w, int row0,
                                          const float (&lse)[1][2], int lane) {
  if (p.lse == nullptr || w.v_col0 != 0 || lane % 4 != 0) return;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + lane / 4 + half * 8;
    if (row < w.rows.q_len) {
      p.lse[w.seq * p.lse_seq_stride + w.head * p.lse_head_stride +
            (w.rows.q_begin + row) * p.lse_row_stride] = lse[0][half];
    }
  }
}

/// O straight from the accumulators, columns from w.v_col0. A quad of lanes holds 4 bytes of a
/// row in each 8-column tile (lane t: columns 2t, 2t+1); alone, those 4-byte stores half-fill the
/// 32-byte sectors they write. For each pair of tiles one exchange between lanes t and t ^ 1 gives
/// every lane 8 contiguous bytes of the pair's 16 columns: even lanes their own tile-d columns and
/// their partner's (units t, t+1 of the pair, in 4-byte units), odd lanes the tile-d+1 columns of
/// their partner and their own (units 4 + t - 1, 4 + t). The quad's four 8-byte stores then cover
/// the pair's 32 bytes in one instruction: lanes 0, 2 tile d, lanes 1, 3 tile d + 1.
template <typename T, int kHeadDimV>
__device__ __forceinline__ void store_output_direct(const FwdParams& p, const WorkTile& w, int row0,
                                                    const float (&acc_o)[1][kHeadDimV / 8][4],
                                                    const float (&inv_sum)[1][2], int lane) {
  static_assert(kHeadDimV % 16 == 0, "whole pairs of 8-column tiles");
  const int t = lane % 4;
  const bool odd = (t & 1) != 0;
  // 4-byte unit of the pair this lane's 8 bytes start at; the tile of the pair they lie in.
  const int unit = odd ? 4 + t - 1 : t;
  const int tile_of_pair = odd ? 1 : 0;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + lane / 4 + half * 8;
    const bool row_valid = row < w.rows.q_len;
    T* out_row =
        row_valid ? operand_at<T>(p.out, w.seq, w.rows.q_begin + row, w.head) + w.v_col0 : nullptr;
#pragma unroll
    for (int d = 0; d < kHeadDimV / 8; d += 2) {
      const uint32_t own_d = ptx::pack2<T>(acc_o[0][d][2 * half] * inv_sum[0][half],
                                           acc_o[0][d][2 * half + 1] * inv_sum[0][half]);
      const uint32_t own_next = ptx::pack2<T>(acc_o[0][d + 1][2 * half] * inv_sum[0][half],
                                              acc_o[0][d + 1][2 * half + 1] * inv_sum[0][half]);
      // Every lane of the warp takes part in the exchange, rows past the sequence included.
      const uint32_t received = __shfl_xor_sync(0xffffffffu, odd ? own_d : own_next, 1);
      const uint2 chunk = odd ? make_uint2(received, own_next) : make_uint2(own_d, received);
      if (row_valid && w.v_col0 + (d + tile_of_pair) * 8 < p.shape.head_dim) {
        *reinterpret_cast<uint2*>(out_row + d * 8 + unit * 2) = chunk;
      }
    }
  }
}

/// Shared address of 16-byte chunk `chunk` of row `row` (0..15) in a warp's staging buffer:
/// 64-column panels of 16 rows x 128 bytes, the chunk index XORed with the row so that the eight
/// rows of an stmatrix matrix, and the eight chunks of a row read back, fall in different banks.
__device__ __forceinline__ uint32_t staging_chunk(uint32_t buffer, int row, int chunk) {
  return buffer + static_cast<uint32_t>((chunk / 8) * static_cast<int>(kStagingPanelBytes) +
                                        row * 128 + (((chunk % 8) ^ (row % 8)) * 16));
}

/// Columns [kCol0, kCol0 + kCols) of the warp's O through its staging buffer.
template <typename T, int kHeadDimV, int kCol0, int kCols>
__device__ __forceinline__ void store_columns_staged(const FwdParams& p, const WorkTile& w,
                                                     int row0,
                                                     const float (&acc_o)[1][kHeadDimV / 8][4],
                                                     const float (&inv_sum)[1][2], uint32_t buffer,
                                                     int lane) {
  static_assert(kCol0 % 16 == 0 && kCols % 16 == 0);
  // Lane i addresses row i % 8 of matrix i / 8: matrices 0 and 1 are rows 0-7 and 8-15 of the
  // first 8 columns of a 16-column pair, 2 and 3 the same of the next 8.
  const int matrix = lane / 8;
  const int st_row = lane % 8 + 8 * (matrix % 2);
  const float inv0 = inv_sum[0][0], inv1 = inv_sum[0][1];
#pragma unroll
  for (int pair = 0; pair < kCols / 16; ++pair) {
    const int d = kCol0 / 8 + 2 * pair;
    stmatrix_x4(staging_chunk(buffer, st_row, 2 * pair + matrix / 2),
                ptx::pack2<T>(acc_o[0][d][0] * inv0, acc_o[0][d][1] * inv0),
                ptx::pack2<T>(acc_o[0][d][2] * inv1, acc_o[0][d][3] * inv1),
                ptx::pack2<T>(acc_o[0][d + 1][0] * inv0, acc_o[0][d + 1][1] * inv0),
                ptx::pack2<T>(acc_o[0][d + 1][2] * inv1, acc_o[0][d + 1][3] * inv1));
  }
  __syncwarp();
  constexpr int kChunksPerRow = kCols / 8;
  T* const out = operand_at<T>(p.out, w.seq, w.rows.q_begin + row0, w.head) + w.v_col0 + kCol0;
  const int rows_valid = w.rows.q_len - row0;
  const int cols_valid = p.shape.head_dim - w.v_col0 - kCol0;
#pragma unroll
  for (int step = 0; step < kChunksPerRow / 2; ++step) {  // 16 rows x kChunksPerRow over 32 lanes
    const int index = step * 32 + lane;
    const int row = index / kChunksPerRow;
    const int chunk = index % kChunksPerRow;
    if (row < rows_valid && chunk * 8 < cols_valid) {
      *reinterpret_cast<uint4*>(out + row * p.out.row_stride + chunk * 8) =
          ld_shared_v4(staging_chunk(buffer, row, chunk));
    }
  }
  // The next round (or tile) overwrites the buffer only after every lane has read its chunks.
  __syncwarp();
}

/// O through the staging buffer in rounds of kEpiloguePanels panels (inputs T).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int... kRound>
__device__ __forceinline__ void store_output_staged(
    const FwdParams& p, const WorkTile& w, int row0,
    const float (
        &acc_o)[1][FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>::kHeadDimV / 8]
               [4],
    const float (&inv_sum)[1][2], uint32_t buffer, int lane,
    std::integer_sequence<int, kRound...>) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  constexpr int kRoundCols = Tr::kEpiloguePanels * 64;
  (store_columns_staged<typename Tr::Out, Tr::kHeadDimV, kRound * kRoundCols,
                        (Tr::kHeadDimV - kRound * kRoundCols < kRoundCols
                             ? Tr::kHeadDimV - kRound * kRoundCols
                             : kRoundCols)>(p, w, row0, acc_o, inv_sum, buffer, lane),
   ...);
}

/// Writes the partial result of a split unit (FwdParams::split_o, split_lse): a warp's 16 rows,
/// from row `tile_row0` of the tile, of O normalized by the unit's own sum in fp32, and their LSE
/// over the unit's keys. Rows past q_len are skipped, as the combine skips them.
template <int kBlockM, int kHeadDimV>
__device__ __forceinline__ void store_partial(const FwdParams& p, const WorkTile& w, int tile_row0,
                                              const float (&acc_o)[1][kHeadDimV / 8][4],
                                              const float (&inv_sum)[1][2],
                                              const float (&lse)[1][2], int lane) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int tile_row = tile_row0 + lane / 4 + half * 8;
    if (w.m0 + tile_row >= w.rows.q_len) continue;
    const int64_t row = static_cast<int64_t>(w.partial) * kBlockM + tile_row;
    float* out_row = p.split_o + row * kHeadDimV;
#pragma unroll
    for (int d = 0; d < kHeadDimV / 8; ++d) {
      *reinterpret_cast<float2*>(out_row + d * 8 + 2 * (lane % 4)) = make_float2(
          acc_o[0][d][2 * half] * inv_sum[0][half], acc_o[0][d][2 * half + 1] * inv_sum[0][half]);
    }
    if (lane % 4 == 0) p.split_lse[row] = lse[0][half];
  }
}

/// Writes a warp's 16 rows of O (from row0; rows past q_len and columns past the head dim are
/// never written) and their LSE, for inputs T. `buffer` is the warp's staging buffer where it has
/// one.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void store_output(
    const FwdParams& p, const WorkTile& w, int row0,
    const float (
        &acc_o)[1][FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>::kHeadDimV / 8]
               [4],
    const float (&inv_sum)[1][2], const float (&lse)[1][2], uint32_t buffer, int lane) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  if constexpr (Tr::kEpiloguePanels > 0) {
    constexpr int kRoundCols = Tr::kEpiloguePanels * 64;
    // Opaque: the staging addresses are computed when the epilogue runs, not held through the
    // main loop (they spilled at D = 128).
    store_output_staged<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(
        p, w, row0, acc_o, inv_sum, opaque(buffer), opaque(lane),
        std::make_integer_sequence<int, (Tr::kHeadDimV + kRoundCols - 1) / kRoundCols>{});
  } else {
    store_output_direct<typename Tr::Out, Tr::kHeadDimV>(p, w, row0, acc_o, inv_sum, lane);
  }
  store_lse(p, w, row0, lse, lane);
}

}  // namespace flashvision::detail::sm90
