// Tile sizes and shared-memory layout of the sm90 backward main kernel: one constexpr description
// read by the host (support checks, launch) and by the kernel.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm90 {

/// Head-dim buckets the sm90 backward serves; the others run the sm80 backward.
constexpr bool bwd_bucket_supported(int bucket) { return bucket == 64 || bucket == 128; }

/// Keys of a CTA: 64 per consumer warpgroup, the M of their S^T = K Q^T and dK, dV GEMMs.
inline constexpr int kBwdBlockN = 128;
/// Query rows per step: the N of S^T and dP^T, the k extent of the dK and dV GEMMs.
inline constexpr int kBwdBlockM = 64;
/// Query-block slots (Q, dO, LSE, D) the producer fills ahead of the consumers.
inline constexpr int kBwdStages = 2;
inline constexpr int kBwdConsumers = 2;
inline constexpr int kBwdThreads = (kBwdConsumers + 1) * 128;
/// setmaxnreg budgets of a producer and a consumer thread (bwd_kernel.cuh checks that they fit
/// the registers the CTA is launched with).
inline constexpr int kBwdProducerRegisters = 24;
inline constexpr int kBwdConsumerRegisters = 240;

/// Swizzle (and panel row) bytes of the Q, K, V and dO tiles: a panel holds half the head dim,
/// so that each consumer's half of dQ = dS K reads one panel of K as its MN-major B operand.
constexpr int bwd_swizzle_bytes(int bucket) { return bucket; }

/// dS tiles, [query][key] with the keys K-major for dQ's A operand: 128-byte swizzled panels of
/// 64 keys (one per consumer), two buffers so that one step's dQ GEMMs and the next step's dS
/// stores do not meet.
inline constexpr std::size_t kBwdDsBytes = static_cast<std::size_t>(kBwdBlockM) * kBwdBlockN * 2;

/// Floats of the LSE and D values of one query block's rows, one buffer per query-block slot.
inline constexpr int kBwdRowBufferFloats = 2 * kBwdBlockM;

/// Byte offsets of the backward's shared-memory regions from a 1024-byte aligned base.
struct BwdSmemOffsets {
  std::size_t k, v, q, dout, ds, rows, barriers, end;
};

constexpr BwdSmemOffsets bwd_smem_offsets(int bucket) {
  BwdSmemOffsets o{};
  const std::size_t kv_tile = static_cast<std::size_t>(kBwdBlockN) * bucket * 2;
  const std::size_t q_tile = static_cast<std::size_t>(kBwdBlockM) * bucket * 2;
  o.k = 0;
  o.v = o.k + kv_tile;
  o.q = o.v + kv_tile;  // kBwdStages Q tiles, then as many dO tiles
  o.dout = o.q + kBwdStages * q_tile;
  o.ds = o.dout + kBwdStages * q_tile;
  o.rows = o.ds + 2 * kBwdDsBytes;
  o.barriers = o.rows + kBwdStages * kBwdRowBufferFloats * sizeof(float);
  // K/V full, then per stage query-block full and empty.
  o.end = o.barriers + 8 * (1 + 2 * kBwdStages);
  return o;
}

/// Dynamic shared memory of the backward: the regions and 1 KiB to align the base.
constexpr std::size_t bwd_smem_bytes(int bucket) { return bwd_smem_offsets(bucket).end + 1024; }

}  // namespace flashvision::detail::sm90
