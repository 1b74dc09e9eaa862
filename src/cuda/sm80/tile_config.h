// Tile sizes of the sm80 kernels, per head-dim bucket: one constexpr table read by the host
// (launch geometry, shared-memory size, support checks) and by the kernels.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm80 {

/// Head-dim buckets of the sm80 path (each a multiple of 16, the mma k step). Bucket 512 has a
/// backward only: a forward warp would hold 16 rows x 512 fp32 O accumulators, 256 registers a
/// thread, and on Hopper the sm90 forward serves it.
inline constexpr int kHeadDimBuckets[] = {32, 48, 64, 80, 96, 128, 160, 192, 256, 512};

/// The widest head dims of the sm80 forward and backward.
inline constexpr int kFwdMaxHeadDim = 256;
inline constexpr int kBwdMaxHeadDim = 512;

/// Smallest bucket holding `head_dim`, or 0 when none does (head_dim > 512).
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
  int block_m;  ///< 0: the bucket has no such variant
  int block_n;
  int warps;
  /// CTAs per SM the tile is meant to run at; above 1 the launch asks for the SM's whole shared
  /// memory as such (the carveout), so that the L1 split cannot hold it to one.
  int ctas_per_sm = 1;
};

/// Forward tile variants of a bucket: 0 fits every sm80+ device; 1, where a bucket has it, is
/// taken on devices whose SM holds two of its CTAs (fwd_tile_variant).
inline constexpr int kFwdTileVariants = 2;

/// Forward tile `variant` of a head-dim bucket (block_m = 0 where the bucket has none).
constexpr FwdTile fwd_tile(int head_dim, int variant = 0) {
  if (variant == 1) {
    // D = 256 on an SM with 228 KiB (Hopper): 64 x 64 with 4 warps of 16 rows needs 99 KiB, so two
    // CTAs share the SM with the same 8 warps as one 128 x 64 CTA, but as two barrier domains: one
    // CTA's GEMMs run while the other waits at a barrier or for its K/V copy (FA2's Hopper tile).
    // The register file still holds both: 128 threads x 255 registers x 2 <= 64 Ki.
    if (head_dim == 256) return {64, 64, 4, 2};
    // D = 64: 128 keys per step (FA2's tile) halve the per-key cost of the barriers, the row-max
    // shuffles and the O rescale; the scores then take 128 registers, at the 255 limit.
    if (head_dim == 64) return {128, 128, 4};
    return {};
  }
  if (variant != 0) return {};
  // A warp owns 32 rows (4 warps) or 16 rows (8 warps): the O accumulator plus one score block
  // stay within 255 registers. Wide key blocks amortize the per-block costs that do not scale with
  // kBlockN (the O rescale, the row-max shuffles, two barriers) over more tensor-core work.
  if (head_dim <= 128) return {128, 64, 4};
  return {128, 64, 8};
}

/// Forward dynamic shared memory in bytes of tile `variant`: Q block, one K and one V block.
constexpr std::size_t fwd_smem_bytes(int head_dim, int variant = 0) {
  const FwdTile t = fwd_tile(head_dim, variant);
  return static_cast<std::size_t>(t.block_m + 2 * t.block_n) * padded(head_dim) * 2;
}

/// Whether tile `variant` of a bucket can keep K and V unpadded and XOR-swizzled in shared memory
/// (fwd_kv_stream.cuh, warp_gemm_swizzled.cuh): rows of whole 128-byte lines and copy passes of a
/// multiple of 4 rows with every thread busy (D = 64, 128, 256; not 192: its 24 chunks a row do
/// not divide 256 threads). The allocation stays fwd_smem_bytes.
constexpr bool fwd_kv_swizzle_fits(int head_dim, int variant) {
  const FwdTile t = fwd_tile(head_dim, variant);
  const int chunks = head_dim / 8, threads = t.warps * 32;
  return head_dim <= kFwdMaxHeadDim && t.block_m > 0 && head_dim % 64 == 0 &&
         threads % chunks == 0 && (threads / chunks) % 4 == 0;
}

/// Shared memory the runtime reserves per CTA on sm80 and newer (cudaDevAttrReservedSharedMemory
/// PerBlock), which counts against the SM's shared memory when CTAs share an SM.
inline constexpr std::size_t kReservedSmemPerBlock = 1024;

/// The forward tile variant for a bucket on a device with `smem_per_sm` bytes of shared memory
/// per SM and `smem_optin` per block: 1 where the bucket has it and two of its CTAs fit one SM
/// (at D = 256 on H100/H200, 228 KiB, not on A100, 164 KiB), else 0.
constexpr int fwd_tile_variant(int head_dim, std::size_t smem_per_sm, std::size_t smem_optin) {
  const FwdTile t = fwd_tile(head_dim, 1);
  const std::size_t bytes = fwd_smem_bytes(head_dim, 1);
  return t.block_m > 0 && bytes <= smem_optin && 2 * (bytes + kReservedSmemPerBlock) <= smem_per_sm
             ? 1
             : 0;
}

/// Backward tile: the CTA owns block_n keys and walks query blocks of block_m rows.
struct BwdTile {
  int block_m;  ///< 0: the bucket has no such variant
  int block_n;
  int warps;
  /// Warps along the keys of S^T and dP^T; 0: as warp_grid picks.
  int sdp_key_warps;
  /// Query slots (Q, dO, LSE, D buffers): 2 loads the next query block during the current one.
  int query_slots;
  /// dQ = dS K in this many passes over column ranges of the head dim, each with its own
  /// accumulator and atomics: fewer live registers than one pass over all of D.
  int dq_passes = 1;
};

/// Backward tile variants of a bucket, in rising order of preference and shared memory: the host
/// takes the highest that the device allows (bwd_tile_variant); 0 is what the support check asks.
inline constexpr int kBwdTileVariants = 3;

/// Tile `variant` of a head-dim bucket (block_m = 0 where the bucket has none).
constexpr BwdTile bwd_tile(int head_dim, int variant = 0) {
  // D = 512 (a VAE's single head): 32 keys keep dK and dV at 128 fp32 registers a thread, what 64
  // keys take at D = 256, and dQ runs in four passes of 128 columns (32 registers each). One slot
  // of 64 query rows: K, V, P^T, dS^T and the slot take 204.5 KiB; a second slot (130.5 KiB) would
  // exceed the 227 KiB Hopper allows, and an A100 or smaller SM does not hold even this tile (the
  // support check says so).
  if (head_dim == 512) return variant == 0 ? BwdTile{64, 32, 8, 0, 1, 4} : BwdTile{};
  const int block_n = head_dim <= 128 ? 128 : 64;
  // D = 80 at 255 registers: two 16-key m-tiles per warp in S^T and dP^T (warp_grid's pick)
  // spilled 432 bytes, one spills about what the kernel did before the grids (84 / 152 bytes);
  // two query slots doubled that again (248-byte reloads), so it has variant 0 only.
  if (head_dim == 80) return variant == 0 ? BwdTile{64, 128, 8, 8, 1} : BwdTile{};
  // D = 256: dQ (64 x 256, 64 fp32 registers a thread in one pass) would be live next to dK and
  // dV (128 registers); two passes of 128 columns keep 32, which left the kernel at 255 registers
  // with spills and no room to load the next k step's fragments ahead of its mma.
  const int dq_passes = head_dim == 256 ? 2 : 1;
  switch (variant) {
    case 0: return {64, block_n, 8, 0, 1, dq_passes};
    case 1: return {64, block_n, 8, 0, 2, dq_passes};
    // 128 query rows: half the barriers and per-block work per query row, and S^T warp tiles of
    // 32 x 64 (fewer ldmatrix loads per mma). Up to D = 64 the accumulators fit 255 registers.
    case 2: return head_dim <= 64 ? BwdTile{128, 128, 8, 0, 2} : BwdTile{};
    default: return {};
  }
}

/// How the warps of a CTA split one warp-GEMM output of rows x cols (both operands from shared
/// memory): row_warps x col_warps warps, each owning m_tiles 16-row by n_tiles 8-column tiles.
struct WarpGrid {
  int row_warps;
  int col_warps;
  int m_tiles;
  int n_tiles;
};

/// The split of a rows x cols output over `warps` warps that loads the fewest ldmatrix bytes per
/// mma: a warp's k step loads m_tiles A fragments and n_tiles / 2 B pairs (x4 each) for
/// m_tiles * n_tiles mma, and the backward is bound by those shared-memory loads. Among equals the
/// one with more row warps (fewer A fragments in registers). `only_row_warps` > 0 restricts the
/// choice to that many row warps. row_warps = 0: none fits.
constexpr WarpGrid warp_grid(int rows, int cols, int warps, int only_row_warps = 0) {
  WarpGrid best{0, 0, 0, 0};
  for (int row_warps = warps; row_warps >= 1; row_warps /= 2) {
    const int col_warps = warps / row_warps;
    if (warps % row_warps != 0 || rows % (16 * row_warps) != 0 || cols % (8 * col_warps) != 0 ||
        (only_row_warps > 0 && row_warps != only_row_warps)) {
      continue;
    }
    const int m = rows / (16 * row_warps), n = cols / (8 * col_warps);
    // (2m + n) / (m n) half-x4 loads per mma, compared without division.
    if (best.row_warps == 0 ||
        (2 * m + n) * best.m_tiles * best.n_tiles < (2 * best.m_tiles + best.n_tiles) * m * n) {
      best = {row_warps, col_warps, m, n};
    }
  }
  return best;
}

/// Whether the backward keeps its Q and dO tiles unpadded and XOR-swizzled in shared memory
/// (warp_gemm_swizzled.cuh): rows of whole 128-byte lines, copied in passes of a multiple of 4 rows
/// by all threads of every tile variant (TileStream's condition). They are the tiles copied on
/// every step; into padded rows each 8-thread copy group writes two 128-byte lines in 7 rows of 8
/// (the forward's K/V copies measured 2.1x the ideal shared-memory wavefronts). On the H200
/// (bench/results/2026-11-30-s13): fwd+bwd +3-4 % at D = 64, +0.6-1.6 % at 128, +3-4 % at 256.
/// That leaves buckets 64, 128 and 256: a row of D = 192 is 24 16-byte chunks, which 256 threads
/// do not cover in whole rows. K and V, copied once per key block, stay padded, and so does bucket
/// 512, whose GPU tests did not run with the swizzle.
constexpr bool bwd_query_swizzled(int head_dim) {
  if (head_dim % 64 != 0 || head_dim > 256) return false;
  const int chunks = head_dim / 8;
  for (int variant = 0; variant < kBwdTileVariants; ++variant) {
    const BwdTile t = bwd_tile(head_dim, variant);
    const int threads = t.warps * 32;
    if (t.block_m != 0 && (threads % chunks != 0 || (threads / chunks) % 4 != 0)) return false;
  }
  return true;
}

/// Row pitch in elements of the backward's Q and dO tiles.
constexpr int bwd_query_pitch(int head_dim) {
  return bwd_query_swizzled(head_dim) ? head_dim : padded(head_dim);
}

/// Shared memory of one query slot of backward tile `variant`: a Q and a dO block, LSE and D of
/// their rows.
constexpr std::size_t bwd_query_slot_bytes(int head_dim, int variant) {
  const BwdTile t = bwd_tile(head_dim, variant);
  return static_cast<std::size_t>(2 * t.block_m) * bwd_query_pitch(head_dim) * 2 +
         2 * t.block_m * sizeof(float);
}

/// Backward dynamic shared memory of tile `variant`: K and V blocks, P^T and dS^T, query slots.
constexpr std::size_t bwd_smem_bytes(int head_dim, int variant = 0) {
  const BwdTile t = bwd_tile(head_dim, variant);
  const std::size_t kv = static_cast<std::size_t>(2 * t.block_n) * padded(head_dim) * 2;
  const std::size_t probs = static_cast<std::size_t>(2 * t.block_n) * padded(t.block_m) * 2;
  return kv + probs + t.query_slots * bwd_query_slot_bytes(head_dim, variant);
}

/// The backward tile variant for a bucket on a device allowing `smem_optin` bytes per block: the
/// highest the bucket has that fits, else 0. On Hopper: 2 up to D = 64, 1 above (0 at D = 80 and
/// 512); on A100 (163 KiB): 2 at D = 32, 48; 1 at 64, 96, 160; 0 at 80, 128, 192, 256 (512 does
/// not fit).
constexpr int bwd_tile_variant(int head_dim, std::size_t smem_optin) {
  for (int variant = kBwdTileVariants - 1; variant > 0; --variant) {
    if (bwd_tile(head_dim, variant).block_m > 0 && bwd_smem_bytes(head_dim, variant) <= smem_optin) {
      return variant;
    }
  }
  return 0;
}

}  // namespace flashvision::detail::sm80
