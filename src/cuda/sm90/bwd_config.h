// Tile sizes and shared-memory layout of the sm90 backward main kernel: one constexpr description
// read by the host (support checks, launch) and by the kernel.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm90 {

/// How a head-dim bucket's tiles are laid out in shared memory and how its two consumers split the
/// columns of dQ = dS K. Q, K, V and dO are stored as column panels of `swizzle_bytes` per row (the
/// TMA box and the wgmma swizzle). Each consumer computes dQ for `dq_panels` whole panels, so that
/// its B operand (K, MN-major) starts on a panel boundary and its N is a whole number of panels:
/// consumer c covers panels c (panels() - dq_panels) onwards. Where the panels cannot be halved
/// (an odd count), the consumers' ranges share shared_dq_panels() panels in the middle, which
/// both compute and only consumer 0 adds to dQ: the alternative, a different N per consumer, puts
/// a branch around the wgmma, which makes ptxas serialize every wgmma of the kernel (C7520).
struct BwdTile {
  int bucket = 0;
  int swizzle_bytes = 0;  ///< 0: the sm90 backward does not serve the bucket
  int dq_panels = 0;
  /// dQ goes to the workspace through shared staging boxes and TMA reduce-adds (bwd_kernel.cuh's
  /// add_dq) rather than float2 atomics from every thread. Measured in session 15 against the
  /// atomics: +19 % on the D = 128 backward kernel, +2 % at D = 64 (ViT-B/16's 197 rows: -1.6 %),
  /// and -7 % at 48, -1 % at 80, where a step's few atomics cost less than the staging's barrier.
  bool staged_dq = false;

  constexpr int panel_cols() const { return swizzle_bytes / 2; }
  constexpr int panels() const { return bucket / panel_cols(); }
  /// Columns of each consumer's dQ accumulator (the N of its dQ wgmma).
  constexpr int dq_cols() const { return dq_panels * panel_cols(); }
  constexpr int shared_dq_panels() const { return 2 * dq_panels - panels(); }
};

/// The sm90 backward's tile of a bucket. 64 and 128 have one panel per half of the head dim at the
/// 64- and 128-byte swizzle; 32 and 96 at the 32-byte swizzle (16-column panels: 1 and 3 per half;
/// the forward's 64-byte panels would be three at 96).
/// 48 and 80 have an odd number of 32-byte panels (3 and 5, as in the forward): their consumers
/// compute 2 and 3 panels of dQ, one of them in common, so the dQ GEMM does 4/3 and 6/5 of its
/// work there (the backward's five GEMMs 1.07x and 1.04x), while the dQ atomics stay one per
/// element. Buckets above 128 are not served: dK and dV alone take D of a consumer thread's 240
/// registers, which leaves too few for S^T and dP^T (64 each per step) at D >= 160.
constexpr BwdTile bwd_tile(int bucket) {
  switch (bucket) {
    case 32: return {32, 32, 1};
    case 48: return {48, 32, 2};
    case 64: return {64, 64, 1, true};
    case 80: return {80, 32, 3};
    case 96: return {96, 32, 3};
    case 128: return {128, 128, 1, true};
    default: return {};
  }
}

/// Head-dim buckets the sm90 backward serves; the others run the sm80 backward.
constexpr bool bwd_bucket_supported(int bucket) { return bwd_tile(bucket).swizzle_bytes != 0; }

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

/// dS tiles, [query][key] with the keys K-major for dQ's A operand: 128-byte swizzled panels of
/// 64 keys (one per consumer), two buffers so that one step's dQ GEMMs and the next step's dS
/// stores do not meet.
inline constexpr std::size_t kBwdDsBytes = static_cast<std::size_t>(kBwdBlockM) * kBwdBlockN * 2;

/// Columns of a dQ staging box: each consumer puts its dQ columns of a step into boxes of 16 fp32
/// columns (64-byte rows, the 64-byte swizzle) by kBwdBlockM rows, which one thread then adds into
/// the workspace with TMA reduce-adds. 16 columns divide every consumer's range and the columns
/// consumer 1 leaves to consumer 0 (whole panels of 16, 32 or 64 columns).
inline constexpr int kBwdDqBoxCols = 16;
inline constexpr std::size_t kBwdDqBoxBytes =
    static_cast<std::size_t>(kBwdBlockM) * kBwdDqBoxCols * sizeof(float);

/// Floats of the LSE and D values of one query block's rows, one buffer per query-block slot.
inline constexpr int kBwdRowBufferFloats = 2 * kBwdBlockM;

/// Byte offsets of the backward's shared-memory regions from a 1024-byte aligned base.
struct BwdSmemOffsets {
  std::size_t k, v, q, dout, ds, dq_stage, rows, barriers, end;
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
  o.dq_stage = o.ds + 2 * kBwdDsBytes;  // each consumer's dQ boxes
  const BwdTile tile = bwd_tile(bucket);
  o.rows = o.dq_stage +
           (tile.staged_dq ? kBwdConsumers * (tile.dq_cols() / kBwdDqBoxCols) * kBwdDqBoxBytes : 0);
  o.barriers = o.rows + kBwdStages * kBwdRowBufferFloats * sizeof(float);
  // K/V full, then per stage query-block full and empty.
  o.end = o.barriers + 8 * (1 + 2 * kBwdStages);
  return o;
}

/// Dynamic shared memory of the backward: the regions and 1 KiB to align the base.
constexpr std::size_t bwd_smem_bytes(int bucket) { return bwd_smem_offsets(bucket).end + 1024; }

}  // namespace flashvision::detail::sm90
