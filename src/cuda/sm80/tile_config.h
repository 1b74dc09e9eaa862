// Tile sizes of the sm80 kernels, per head-dim bucket: one constexpr table read by the host
// (launch geometry, shared-memory size, support checks) and by the kernels.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm80 {

/// Head-dim buckets compiled for the sm80 path (each a multiple of 16, the mma k step).
inline constexpr int kHeadDimBuckets[] = {32, 48, 64, 80, 96, 128, 160, 192, 256};

/// Smallest bucket holding `head_dim`, or 0 when none does (head_dim > 256).
constexpr int head_dim_bucket(long long head_dim) {
  for (int bucket : kHeadDimBuckets) {
    if (head_dim <= bucket) return bucket;
  }
  return 0;
}

/// Shared-memory rows are padded by 8 elements (16 bytes) so that the row stride in 16-byte units
/// is odd: ldmatrix's eight row addresses then fall in eight different bank groups.
constexpr int padded(int cols) { return cols + 8; }

/// Forward tile: kBlockM query rows, kBlockN keys per step, kWarps warps splitting the rows.
struct FwdTile {
  int block_m;
  int block_n;
  int warps;
};

/// Forward tile of a head-dim bucket.
constexpr FwdTile fwd_tile(int head_dim) {
  // A warp owns 32 rows (4 warps) or 16 rows (8 warps): the O accumulator plus one score block
  // stay within 255 registers. Wide key blocks amortize the per-block costs that do not scale with
  // kBlockN (the O rescale, the row-max shuffles, two barriers) over more tensor-core work.
  if (head_dim <= 128) return {128, 64, 4};
  return {128, 64, 8};
}

/// Forward dynamic shared memory in bytes: Q block, one K and one V block.
constexpr std::size_t fwd_smem_bytes(int head_dim) {
  const FwdTile t = fwd_tile(head_dim);
  return static_cast<std::size_t>(t.block_m + 2 * t.block_n) * padded(head_dim) * 2;
}

/// Backward tile: the CTA owns kBlockN keys and walks query blocks of kBlockM rows.
struct BwdTile {
  int block_m;
  int block_n;
  int warps;
};

/// Backward tile of a head-dim bucket.
constexpr BwdTile bwd_tile(int head_dim) {
  if (head_dim <= 128) return {64, 128, 8};
  return {64, 64, 8};
}

/// Backward dynamic shared memory: K, V, Q, dO blocks, P^T and dS^T, LSE and D of the rows.
constexpr std::size_t bwd_smem_bytes(int head_dim) {
  const BwdTile t = bwd_tile(head_dim);
  const std::size_t operands = static_cast<std::size_t>(2 * t.block_n + 2 * t.block_m) *
                               padded(head_dim) * 2;
  const std::size_t probs = static_cast<std::size_t>(2 * t.block_n) * padded(t.block_m) * 2;
  return operands + probs + 2 * t.block_m * sizeof(float);
}

}  // namespace flashvision::detail::sm80
