// The FP8 forward's transposition of V, inside the kernel. The e4m3 wgmma reads its shared-memory
// B operand only K-major, so O += P V needs every block of V as [D][keys] (fp8_values.h). The
// producer thread loads each block as it lies ([keys][D], the K stages' swizzled panels) into one
// of kFp8ValueStagingSlots slots; the producer warpgroup's other three warps, which would
// otherwise idle, write it transposed into the V stage the consumers read, and arrive on the
// stage's full barrier. Transposing here rather than in a pass over V before the kernel saves
// that pass's trip through device memory, which took 15-25 % of a short sequence's forward
// (perf-notes, session 28).
//
// A warp step moves 16 keys x 32 columns of D. ldmatrix.trans of four 8x8 b16 matrices (keys 0-7
// and 8-15 of columns 0-15, then of columns 16-31; a b16 element is two adjacent columns of one
// key) gives lane l, with t = l % 4 and q = l / 4, keys 2t, 2t+1 (then 8+2t, 9+2t) of columns
// 2q, 2q+1. Two byte permutations part the columns: the lane then holds, for rows 2q and 2q+1 of
// V^T, the word of keys 2t, 2t+1, 8+2t, 9+2t, which is bytes 4t..4t+3 of those 16 keys in P's
// fragment order (fp8_key_at). stmatrix writes the four words, rows 2q, 2q+1, 16+2q, 17+2q, each
// row's 16 keys as one 16-byte chunk.
#pragma once

#include <cstdint>

#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/ptx_sm90.cuh"

namespace flashvision::detail::sm90 {

/// Warps of the producer warpgroup that transpose V (all but the one that issues the loads).
inline constexpr int kValueTransposerWarps = 3;

/// Where byte `offset` of a tile of kRowBytes-byte rows (from a 1024-byte aligned base) lies under
/// the TMA's and wgmma's swizzle of that width: its 16-byte chunk index XORed with the row bits
/// above it.
template <int kRowBytes>
__device__ __forceinline__ uint32_t swizzled(uint32_t offset) {
  constexpr uint32_t kChunkMask = kRowBytes / 16 - 1;
  return offset ^ (((offset >> 7) & kChunkMask) << 4);
}

/// The transposing warps' loop, `warp` 0 .. kValueTransposerWarps - 1: for every block the
/// producer loads (in its order), wait for the block's staging slot and for the V stage to be
/// free, write this warp's share of the steps, and release both. Ends when the producer marks
/// the loads as ended in the next slot (SmemLayout::loads_ended) with an arrival that carries no
/// block.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void transpose_values(
    const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>& smem, int warp) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  static_assert(Tr::kFp8 && kBlockN % 16 == 0 && Tr::kHeadDimV % 32 == 0);
  constexpr int kKeySteps = kBlockN / 16;
  constexpr int kSteps = kKeySteps * (Tr::kHeadDimV / 32);
  constexpr int kPanelKeys = Tr::kValuePanelKeys;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int matrix = lane / 8, row = lane % 8;
  // ldmatrix: the lane's row address is key 8 (matrix % 2) + row of the step, from column
  // 16 (matrix / 2). stmatrix: row `row` of matrix `matrix` is V^T row 16 (matrix / 2) + 2 row +
  // matrix % 2 of the step's 32.
  const int load_key = 8 * (matrix % 2) + row;
  const int load_col = 16 * (matrix / 2);
  const int store_row = 16 * (matrix / 2) + 2 * row + matrix % 2;
  RingPosition<Tr::kStages> ring;
  RingPosition<Tr::kValueStagingSlots> slot;
  for (;;) {
    mbarrier_wait(smem.v_loaded_full(slot.stage()), slot.parity());
    if (ld_shared_u32(smem.loads_ended(slot.stage())) != 0) return;
    mbarrier_wait(smem.v_empty(ring.stage()), ring.parity() ^ 1);
    const uint32_t src = smem.v_loaded(slot.stage());
    const uint32_t dst = smem.v(ring.stage());
    // One step at a time: unrolled, the loads of the next steps ran ahead and spilled the 24
    // registers of the producer warpgroup.
#pragma unroll 1
    for (int step = warp; step < kSteps; step += kValueTransposerWarps) {
      const int key0 = 16 * (step % kKeySteps), col0 = 32 * (step / kKeySteps);
      const int col = col0 + load_col;
      uint32_t w[4];
      ptx::ldmatrix_x4_trans(
          w, src + (col / Tr::kPanelCols) * kBlockN * Tr::kSwizzle +
                 swizzled<Tr::kSwizzle>((key0 + load_key) * Tr::kSwizzle + col % Tr::kPanelCols));
      const uint32_t dst_row = col0 + store_row;
      stmatrix_x4(dst + (key0 / kPanelKeys) * Tr::kHeadDimV * kPanelKeys +
                      swizzled<kPanelKeys>(dst_row * kPanelKeys + key0 % kPanelKeys),
                  __byte_perm(w[0], w[1], 0x6420), __byte_perm(w[0], w[1], 0x7531),
                  __byte_perm(w[2], w[3], 0x6420), __byte_perm(w[2], w[3], 0x7531));
    }
    // wgmma reads the stage through the async proxy.
    fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) {
      mbarrier_arrive(smem.v_full(ring.stage()));
      mbarrier_arrive(smem.v_loaded_empty(slot.stage()));
    }
    ++ring.index;
    ++slot.index;
  }
}

}  // namespace flashvision::detail::sm90
