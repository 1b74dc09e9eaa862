// Geometry shared by the producer and consumers of the sm90 forward: compile-time tile traits,
// the shared-memory layout, and where a tile of the persistent schedule works.
#pragma once

#include <cstdint>

#include "cuda/common/fwd_tile_order.cuh"
#include "cuda/common/online_softmax.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/sm90/params.h"
#include "cuda/sm90/ptx_sm90.cuh"
#include "cuda/sm90/stale_max_softmax.cuh"
#include "cuda/sm90/tile_config.h"

namespace flashvision::detail::sm90 {

/// Compile-time geometry of the forward kernel for elements T (f16, bf16 or e4m3) of one
/// head-dim bucket and one of its tiles (tile_config.h: 128 rows with one of the bucket's key
/// widths, the wide 192 rows, the half tile's 64, or an FP8 tile); kVInKernel: FP8 with V
/// transposed in the kernel (fp8_values.h), which adds the V staging slots; kValueCols: the columns
/// of V and O a tile covers (tile_config.h's value_columns, or sliced_value_columns in a sliced
/// tile).
template <typename T, int kHeadDim, int kRowsPerBlock, int kKeysPerBlock, bool kVInKernel,
          int kValueCols>
struct FwdTraits {
  static constexpr int kElementBytes = static_cast<int>(sizeof(T));
  /// FP8: V is read transposed ([D][keys], fp8_values.h), which the producer warpgroup's other
  /// warps write from the blocks TMA loads (fwd_value_transposer.cuh); O is bf16.
  static constexpr bool kFp8 = kElementBytes == 1;
  using Out = typename FwdOutput<T>::type;
  static constexpr FwdTile kTile = fwd_tile(kHeadDim, kRowsPerBlock, kKeysPerBlock, kElementBytes);
  static constexpr int kBlockM = kTile.block_m;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kStages = kTile.stages;
  static constexpr int kQBuffers = fwd_q_buffers(kHeadDim, kRowsPerBlock, kKeysPerBlock);
  static constexpr int kConsumers = kTile.consumers();
  static constexpr int kThreads = fwd_threads(kTile);
  static constexpr int kConsumerRegisters = consumer_registers(kTile);
  /// Whether a consumer rescales O between issuing S' = Q K and O += P V, while S' runs on the
  /// tensor cores, rather than once P V has completed (with one or two consumers). Measured on
  /// the H200 (bench/results/2026-11-30-h200-s8/call1): with two consumers D = 256 N = 16384
  /// +3..6 %, ViT-B/16 +4 %, D = 128 even; with three (the wide tiles) D = 64 -3..6 %, SDXL -2 %
  /// (not profiled: there the rescale delays passing the turn to one of two other warpgroups).
  static constexpr bool kRescaleDuringQk = kConsumers <= 2;
  static constexpr int kSwizzle = swizzle_bytes(kHeadDim, kElementBytes);
  static constexpr uint32_t kSwizzleMode = descriptor_swizzle_mode(kSwizzle);
  /// A tile is stored as kPanels column panels of rows x kSwizzle bytes (the TMA box and the
  /// wgmma swizzle atom width).
  static constexpr int kPanelCols = kSwizzle / kElementBytes;
  static constexpr int kPanels = kHeadDim / kPanelCols;
  /// Columns of V (and O) one tile covers, and the tiles (slices) of a query block.
  static constexpr int kHeadDimV = kValueCols;
  static constexpr int kValueSlices = value_slices(kHeadDim, kValueCols);
  static constexpr int kPanelsV = kHeadDimV / kPanelCols;
  /// FP8: keys of a panel of the transposed V (a row of its swizzle) and that swizzle's mode.
  static constexpr int kValuePanelKeys = fp8_value_panel_keys(kBlockN);
  static constexpr uint32_t kValueSwizzleMode = descriptor_swizzle_mode(kValuePanelKeys);
  /// FP8: buffers of V blocks as loaded, before their transposition into the V stages.
  static constexpr int kValueStagingSlots = kVInKernel ? kFp8ValueStagingSlots : 0;
  /// Whether the online softmax moves a row's max only past a slack and skips O's rescale when no
  /// row of a warp moved it (OnlineSoftmax's kLazyMax). Measured on the H200 with the exact softmax
  /// on every block (bench/results/2026-11-30-s18, call 1, forward against main in alternated
  /// processes): D = 256 +4..7 %, D = 128 +1.4..1.9 %; D = 64 -1.4..-2.3 % (ViT-B/16, SDXL,
  /// N = 1024), where O's 32 columns a thread cost less to rescale than the vote and the test.
  /// Since the softmax without a per-score max, it decides only on the blocks that leave its fast
  /// path (a row's first, and those that move the max) and on one-block tiles. Not in FP8, whose
  /// probabilities must stay below e4m3's largest value (kFp8ProbabilityLog2).
  static constexpr bool kLazyMax = kHeadDimV >= 128 && !kFp8;
  /// Whether the mask skips the column tiles every row of a warp sees (score_mask.cuh): most of a
  /// one-block tile's (ViT-B/16's 197 keys in 208, 77 text tokens in 80). At D = 256 its branches
  /// made the cross-tile kernel, with two softmax states beside O, spill.
  static constexpr bool kMaskSkipsSeenTiles = kHeadDimV <= 128;
  /// Whether a row's first key block takes OnlineSoftmax's short chains: in 16-bit tiles of two or
  /// three consumers. Not in the half tiles (one consumer of 240 registers), whose D = 64
  /// short-width kernel spilled 32 bytes with them; FP8 was not measured with them.
  static constexpr bool kShortSoftmaxChains = kConsumers > 1 && !kFp8;
  /// After a row's first key block, the softmax without a per-score max (stale_max_softmax.cuh);
  /// in FP8 with probabilities scaled up by 2^kFp8ProbabilityLog2.
  using Softmax = StaleMaxSoftmax<1, kLazyMax, kFp8 ? kFp8ProbabilityLog2 : 0, kShortSoftmaxChains>;
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * kElementBytes;
  static constexpr uint32_t kKBytes = kBlockN * kHeadDim * kElementBytes;
  static constexpr uint32_t kVBytes = kBlockN * kHeadDimV * kElementBytes;
  /// 64-column panels of O a consumer warp stages for the epilogue (0: direct stores).
  static constexpr int kEpiloguePanels =
      epilogue_panels(kHeadDim, kBlockM, kBlockN, kElementBytes, kValueStagingSlots, kValueCols);
  static constexpr uint32_t kStagingBytes = kEpiloguePanels * kStagingPanelBytes;
  static_assert(kBlockM == 64 * kConsumers && kBlockN % 16 == 0);
  static_assert(128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <=
                launch_registers(kThreads));
  static_assert(kHeadDim % kPanelCols == 0 && kHeadDimV % kPanelCols == 0);
  static_assert(fwd_tile_exists(kHeadDim, kRowsPerBlock, kKeysPerBlock, kElementBytes),
                "a tile the bucket does not have (tile_config.h)");
  // FP8: a block of V^T is panels of kHeadDimV rows of kValuePanelKeys keys.
  static_assert(!kFp8 || kBlockN % kValuePanelKeys == 0);
  // Every panel starts 1024-byte aligned, where the swizzle patterns of TMA and the wgmma
  // descriptors (base offset 0) agree.
  static_assert(kBlockM * kSwizzle % 1024 == 0 && kBlockN * kSwizzle % 1024 == 0);
  static_assert(fwd_smem_bytes(kHeadDim, kBlockM, kBlockN, kElementBytes, kValueStagingSlots,
                               kValueCols) <= kMaxSmemBytes);
  static_assert(kValueCols == value_columns(kHeadDim) ||
                    kValueCols == sliced_value_columns(kHeadDim, kRowsPerBlock),
                "a value slice the tile does not have (tile_config.h)");
  // V is transposed in the kernel only in FP8 (fp8_values.h).
  static_assert(!kVInKernel || kFp8);
};

/// Shared-window addresses of the tiles and barriers, from a 1024-byte aligned base.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
struct SmemLayout {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  uint32_t base;

  static constexpr uint32_t kQAllBytes = Tr::kQBuffers * Tr::kQBytes;

  __device__ uint32_t q(int buffer) const { return base + buffer * Tr::kQBytes; }
  __device__ uint32_t k(int stage) const { return base + kQAllBytes + stage * Tr::kKBytes; }
  __device__ uint32_t v(int stage) const {
    return base + kQAllBytes + Tr::kStages * Tr::kKBytes + stage * Tr::kVBytes;
  }
  /// FP8: V staging slot `slot`, a block of V as loaded (the K stages' layout, kPanelsV panels).
  __device__ uint32_t v_loaded(int slot) const {
    return base + kQAllBytes + Tr::kStages * (Tr::kKBytes + Tr::kVBytes) + slot * Tr::kVBytes;
  }
  /// O staging buffer of consumer warp `warp` (0 .. 4 * Tr::kConsumers - 1).
  __device__ uint32_t staging(int warp) const {
    return v_loaded(Tr::kValueStagingSlots) + warp * Tr::kStagingBytes;
  }
  __device__ uint32_t barrier(int index) const { return staging(Tr::kConsumers * 4) + 8 * index; }
  __device__ uint32_t q_full(int buffer) const { return barrier(buffer); }
  __device__ uint32_t q_empty(int buffer) const { return barrier(Tr::kQBuffers + buffer); }
  __device__ uint32_t k_full(int stage) const { return barrier(2 * Tr::kQBuffers + stage); }
  __device__ uint32_t v_full(int stage) const {
    return barrier(2 * Tr::kQBuffers + Tr::kStages + stage);
  }
  __device__ uint32_t k_empty(int stage) const {
    return barrier(2 * Tr::kQBuffers + 2 * Tr::kStages + stage);
  }
  __device__ uint32_t v_empty(int stage) const {
    return barrier(2 * Tr::kQBuffers + 3 * Tr::kStages + stage);
  }
  /// FP8: a V staging slot's load has landed / its transposition has read it.
  __device__ uint32_t v_loaded_full(int slot) const {
    return barrier(2 * Tr::kQBuffers + 4 * Tr::kStages + slot);
  }
  __device__ uint32_t v_loaded_empty(int slot) const {
    return barrier(2 * Tr::kQBuffers + 4 * Tr::kStages + Tr::kValueStagingSlots + slot);
  }
  /// FP8: a word per staging slot, which the producer sets once it has loaded every block,
  /// before the arrival on the slot's full barrier that carries no block
  /// (fwd_value_transposer.cuh). The other slot may still hold the last block.
  __device__ uint32_t loads_ended(int slot) const {
    return barrier(2 * Tr::kQBuffers + 4 * Tr::kStages + 2 * Tr::kValueStagingSlots + slot);
  }
};

/// Position in a ring of buffers, the K/V stages or the Q buffers: the producer and every consumer
/// walk the same sequence of key blocks and tiles, so each keeps its own copy of the counters.
template <int kStages>
struct RingPosition {
  int index = 0;
  __device__ int stage() const { return index % kStages; }
  /// Parity of the ring round: what a "full" wait expects; a producer's "empty" wait uses the
  /// opposite so that its first round passes on fresh barriers.
  __device__ uint32_t parity() const { return static_cast<uint32_t>(index / kStages) & 1u; }
};

/// One tile of the schedule: a query block of one head of one sequence, and its key blocks.
struct WorkTile {
  int m0;  ///< first query row of the block within its sequence
  int head, head_kv, seq;
  SeqRange rows;
  int n_block0;   ///< first key block of the unit (0 unless the tile is split over its keys)
  int n_blocks;   ///< key blocks visited from n_block0, walked from the last down (masked first)
  int seq_coord;  ///< the tensor maps' sequence coordinate (0 in varlen mode: rows are global)
  int partial;    ///< index of the unit's partial result (FwdParams::split_o), -1: a whole tile
  int v_col0;     ///< first column of V and O the tile covers (its value slice's)

  /// Whether the block has rows to write (varlen sequences shorter than the longest have none).
  __device__ bool has_rows() const { return m0 < rows.q_len; }
  /// Whether the producer loads the tile's Q, K and V (rows to write and keys to walk); the
  /// consumers of one without only write zeros.
  __device__ bool has_loads() const { return has_rows() && n_blocks != 0; }
};

/// The work unit with schedule index `unit`: a whole tile (numbered as fwd_tile_order.cuh says),
/// or from split_tile0 on one key range of a tile.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ WorkTile locate_work(const FwdParams& p, int unit) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  const sm80::ShapeParams& s = p.shape;
  WorkTile t;
  // Computed for every unit and selected, not branched around: under a branch ptxas carried the
  // quotient's 64-bit product through the persistent loop and spilled it.
  const bool split_unit = unit >= p.split_tile0;
  const int rank = split_unit ? unit - p.split_tile0 : 0;
  const int tile_rank = p.split_parts_divisor.quotient(rank);
  const int tile = split_unit ? p.split_tile0 + tile_rank : unit;
  const int part = split_unit ? p.split_parts_divisor.remainder(rank, tile_rank) : -1;
  const FwdTilePlace place = fwd_tile_place(tile, p.m_blocks_divisor, Tr::kValueSlices);
  t.v_col0 = place.slice * Tr::kHeadDimV;
  t.seq = p.heads_divisor.quotient(place.bh);
  t.head = p.heads_divisor.remainder(place.bh, t.seq);
  t.head_kv = p.group_divisor.quotient(t.head);
  t.rows = seq_range(s, t.seq);
  t.m0 = place.m_block * Tr::kBlockM;
  // Keys this block can see at all: under the causal mask the last row's limit bounds the rest.
  int n_end = t.rows.k_len;
  if (s.causal) n_end = max(0, min(t.rows.k_len, t.m0 + Tr::kBlockM + t.rows.k_len - t.rows.q_len));
  t.n_blocks = (n_end + Tr::kBlockN - 1) / Tr::kBlockN;
  t.n_block0 = 0;
  t.partial = -1;
  if (part >= 0) {
    t.n_block0 = part * p.split_blocks;
    t.n_blocks = max(0, min(t.n_blocks, t.n_block0 + p.split_blocks) - t.n_block0);
    t.partial = unit - p.split_tile0;
  }
  t.seq_coord = s.cu_seqlens_q == nullptr ? t.seq : 0;
  return t;
}

}  // namespace flashvision::detail::sm90
