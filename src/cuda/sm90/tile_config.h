// Tile sizes and shared-memory layout of the sm90 forward kernel, per head-dim bucket: one
// constexpr table read by the host (launch geometry, support checks) and by the kernel.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm90 {

/// Head-dim buckets the sm90 forward serves (the sm80 buckets: multiples of 16 up to 256).
inline constexpr int kHeadDimBuckets[] = {32, 48, 64, 80, 96, 128, 160, 192, 256};

/// Smallest bucket holding `head_dim`, or 0 when none does.
constexpr int head_dim_bucket(long long head_dim) {
  for (int bucket : kHeadDimBuckets) {
    if (head_dim <= bucket) return bucket;
  }
  return 0;
}

/// Width in bytes of the shared-memory swizzle (and TMA box rows) of a bucket: the widest of 128,
/// 64 and 32 bytes that divides a row, so that 48 and 80 need no padding to 64 or 128 columns.
constexpr int swizzle_bytes(int bucket) {
  return bucket % 64 == 0 ? 128 : (bucket % 32 == 0 ? 64 : 32);
}

/// kBlockM query rows (64 per consumer warpgroup), kBlockN keys per step, kStages K/V buffers.
struct FwdTile {
  int block_m;
  int block_n;
  int stages;
};

/// Forward tile of a bucket. Keys per step shrink at D > 160 so that Q and two stages of K and V
/// fit in the 227 KiB of shared memory a block may have.
constexpr FwdTile fwd_tile(int bucket) {
  if (bucket <= 160) return {128, 128, 2};
  if (bucket <= 192) return {128, 96, 2};
  return {128, 80, 2};
}

/// Consumer warpgroups (64 query rows each) plus one producer warpgroup.
inline constexpr int kConsumerWarpgroups = 2;
inline constexpr int kThreads = (kConsumerWarpgroups + 1) * 128;

/// Bytes of the 8-byte mbarriers: Q full and empty, and per stage K full, V full, K empty, V empty.
constexpr std::size_t barrier_bytes(int stages) { return 8 * (2 + 4 * stages); }

/// Dynamic shared memory of the forward: Q, the K and V stages, the barriers, and 1 KiB of slack
/// to align the swizzled tiles to 1024 bytes (the 128-byte swizzle pattern's period).
constexpr std::size_t fwd_smem_bytes(int bucket) {
  const FwdTile t = fwd_tile(bucket);
  const std::size_t tiles =
      static_cast<std::size_t>(t.block_m + 2 * t.stages * t.block_n) * bucket * 2;
  return tiles + barrier_bytes(t.stages) + 1024;
}

}  // namespace flashvision::detail::sm90
