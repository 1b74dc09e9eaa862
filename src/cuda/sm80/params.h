// Kernel parameters of the sm80 path, filled once on the host from a validated Problem.
#pragma once

#include <cstdint>

namespace flashvision::detail::sm80 {

/// Element strides of one [sequence, row, head, dim] operand and its device pointer.
struct TensorParams {
  void* data = nullptr;
  int64_t seq_stride = 0;
  int64_t row_stride = 0;
  int64_t head_stride = 0;
};

/// What every sm80 kernel needs to know about the problem's geometry.
struct ShapeParams {
  int batch = 0;
  int heads = 0;
  int heads_kv = 0;
  int group = 1;            ///< heads / heads_kv
  int head_dim = 0;         ///< real D (columns past it are padding)
  int seqlen_q = 0;         ///< Nq, or the longest query sequence in varlen mode
  int seqlen_k = 0;
  int64_t total_q = 0;      ///< rows of q over all sequences (clamp bound in varlen mode)
  int64_t total_k = 0;
  const int32_t* cu_seqlens_q = nullptr;  ///< device pointers; nullptr in dense mode
  const int32_t* cu_seqlens_k = nullptr;
  float scale = 0.0f;       ///< softmax scale
  float scale_log2 = 0.0f;  ///< scale * log2(e)
  bool causal = false;
};

/// Forward kernel parameters.
struct FwdParams {
  ShapeParams shape;
  TensorParams q, k, v, out;
  float* lse = nullptr;     ///< optional; addressed by (seq, head, row) strides below
  int64_t lse_seq_stride = 0, lse_head_stride = 0, lse_row_stride = 0;
  int num_m_blocks = 0;
  int num_tiles = 0;  ///< num_m_blocks x heads x sequences
  /// The kernel's tile variant (tile_config.h's fwd_tile), the host's pick for the device.
  int tile_variant = 0;
  /// How K and V lie in shared memory (FwdKvMode); swizzled only where the tile variant has it
  /// (tile_config.h's fwd_kv_swizzle_fits).
  int kv_mode = 0;
  /// The split of the last wave's tiles over the keys (common/fwd_split.h): CTAs before
  /// split_tile0 compute whole tiles, those from there on split_parts key ranges of each tile from
  /// split_tile0 on, split_blocks key blocks each (the last range of a tile may have fewer). The
  /// grid is forward_ctas(*this) CTAs; without a split, split_tile0 == num_tiles.
  int split_tile0 = 0;
  int split_parts = 1;
  int split_blocks = 0;
  /// Partial results of the split units in the layout common/fwd_combine.h reads: fp32 O
  /// [unit][split_rows][split_cols] and LSE [unit][split_rows], unit = CTA - split_tile0.
  float* split_o = nullptr;
  float* split_lse = nullptr;
  int split_rows = 0;  ///< the tile's block_m
  int split_cols = 0;  ///< the head-dim bucket
  /// 1: each CTA asks L2 for its slice of its key range's K and V after its first copies
  /// (fwd_kv_prefetch.cuh), the slices split among the CTAs of the sequence's query blocks and
  /// the kv head's query heads.
  int kv_prefetch = 0;
};

/// CTAs of the forward's grid: one per tile before split_tile0, split_parts per tile from there.
inline int64_t forward_ctas(const FwdParams& p) {
  return p.split_tile0 + static_cast<int64_t>(p.num_tiles - p.split_tile0) * p.split_parts;
}

/// Shared-memory layout of the forward's K and V tiles (fwd_kv_stream.cuh, fwd_kernel.cuh):
/// - kKvPadded: rows padded by 16 bytes, so that ldmatrix's eight row addresses fall in eight
///   bank groups; but then 7 of 8 rows start off a 128-byte line and each 8-thread group's
///   cp.async write spans two lines (Nsight Compute: 2.1x the ideal shared-memory wavefronts for
///   the K/V copies at D = 256 on the H200);
/// - kKvSwizzled: rows unpadded with XOR-swizzled 16-byte chunks (warp_gemm_swizzled.cuh): the
///   same bank groups for ldmatrix, and every 8-thread copy group writes one aligned line.
enum FwdKvMode : int { kKvPadded = 0, kKvSwizzled = 1 };

/// Backward parameters (all three kernels).
struct BwdParams {
  ShapeParams shape;
  TensorParams q, k, v, out, dout, dq, dk, dv;
  const float* lse = nullptr;
  int64_t lse_seq_stride = 0, lse_head_stride = 0, lse_row_stride = 0;
  /// fp32 dQ workspace: dq_head_rows rows of head_dim per head, rows = batch*Nq or total_q, laid
  /// out as dq_layout says (BwdDqLayout).
  float* dq_accum = nullptr;
  float* dvec = nullptr;      ///< fp32 [heads][rows]: rowsum(dO * O)
  /// fp32 [heads][rows]: LSE * log2(e), +inf where LSE = -inf (a row that saw no key: P = 0).
  /// Written by the preprocess kernel in the layout of dvec, so the main kernel copies both
  /// asynchronously instead of waiting on strided LSE loads.
  float* lse_log2 = nullptr;
  int64_t accum_rows = 0;     ///< rows of the workspaces per head
  /// Rows per head of the dQ workspace: accum_rows, rounded up to whole 8-row groups when tiled.
  int64_t dq_head_rows = 0;
  /// How the dQ workspace orders a head's elements (BwdDqLayout).
  int dq_layout = 0;
  int num_n_blocks = 0;
  bool deterministic = false;
  /// The main kernel's tile variant (tile_config.h's bwd_tile): the host takes the highest one the
  /// bucket has whose shared memory the device allows. Its block_m sizes the query blocks.
  int tile_variant = 0;
  /// CTAs that share one key block's query blocks (1: dK, dV go straight to dk, dv). Above 1 each
  /// writes its fp32 partial dK, dV to the two workspaces below, summed by the reduce kernel.
  int num_splits = 1;
  float* dk_partial = nullptr;  ///< fp32 [splits][heads_kv][rows_k][head_dim], dK / scale
  float* dv_partial = nullptr;  ///< fp32 [splits][heads_kv][rows_k][head_dim]
  int64_t partial_rows = 0;     ///< rows_k = batch*Nk or total_k
  /// Key block n starts its walk over the query blocks at block n % query_stagger of its range
  /// (wrapping around): the CTAs that run at once then add into different dQ rows instead of all
  /// into the same block in step. 1: every key block starts at the first query block.
  int query_stagger = 1;
  /// How the main kernel's warps share a step's work (BwdWarpRoles).
  int warp_roles = 0;
  /// The split of the last wave (bwd_split.h's bwd_tail_split; non-deterministic grids that
  /// num_splits leaves whole): the tiles (key block fastest, then kv head, then sequence) before
  /// tail_tile0 run unsplit, and the split kernel runs each tile from tail_tile0 on as tail_parts
  /// CTAs, each over a contiguous share of the query blocks, CTA c on tile tail_tile0 + c /
  /// tail_parts. Their fp32 partial dK, dV go to dk_partial, dv_partial by CTA,
  /// [c][tail_block_n][head_dim], and the reduce kernel sums a tile's parts in order. tail_parts ==
  /// 1: no tail split.
  int tail_tile0 = 0;
  int tail_parts = 1;
  int tail_block_n = 0;  ///< keys of a tile (the tile variant's block_n)
  /// Whether the split kernel of a last-wave split launches as a programmatic dependent of the
  /// unsplit one, its CTAs starting on the SMs that one frees: FLASHVISION_SM80_BWD_TAIL_PDL
  /// allows it (bwd_tail_pdl.h) and the device has compute capability 9.0 or more.
  bool tail_early = false;
};

/// BwdParams::warp_roles: every warp computes tiles of every GEMM (shared), or two groups of half
/// the warps compute S^T and dP^T (split_sdp: bwd_kernel.cuh's probabilities_and_ds_split), or
/// also keep dV and dK apart (groups: the S group accumulates dV, the dP group dK, each group
/// half of dQ's columns; bwd_key_block_groups).
enum BwdWarpRoles : int { kRolesShared = 0, kRolesSplitSdp = 1, kRolesGroups = 2 };

/// BwdParams::dq_layout: a head's dQ rows one after the other (rows), or in 8 x 8 tiles (tiles:
/// dq_layout.h), so that one warp's float2 atomics of an mma tile's 8 rows x 8 columns land on
/// 256 contiguous bytes, two cache lines, instead of eight 32-byte pieces of eight rows.
enum BwdDqLayout : int { kDqRows = 0, kDqTiles = 1 };

}  // namespace flashvision::detail::sm80
