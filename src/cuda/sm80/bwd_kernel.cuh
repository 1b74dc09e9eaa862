// sm80 backward main kernel: one CTA per (key block, kv head, sequence) walks the query blocks of
// every query head of its GQA group. Per query block it recomputes P^T = exp(scale K Q^T - LSE)
// and dP^T = V dO^T, stages P^T and dS^T = P^T (dP^T - D) in shared memory, accumulates
// dV += P^T dO and dK += dS^T Q in registers, and adds dQ = dS K into an fp32 workspace (atomics,
// or ordered read-modify-write in deterministic mode). Each of these GEMMs splits its output over
// the warps as tile_config.h's warp_grid picks: the fewest ldmatrix bytes per mma. The host picks
// the tile variant (bwd_tile: 64 or 128 query rows, one or two query slots) the device's shared
// memory allows.
// With params.query_stagger > 1, key block n starts its walk at query block n % query_stagger of
// its range and wraps around, so that CTAs running at once add into different dQ rows.
// When (key blocks x kv heads x sequences) cannot fill the GPU, the host splits the query blocks
// over num_splits CTAs per key block: each walks a contiguous share and writes fp32 partial dK, dV
// that the reduce kernel (bwd_aux.cu) sums in split order. On larger grids whose last wave is
// partial, the host may split only the tiles of that wave (params.tail_parts): the unsplit kernel
// runs the others and the split kernel, launched after it, the tail's parts. On sm_90 the split
// kernel is a programmatic dependent launch (BwdParams::tail_early): its CTAs take the SMs the
// unsplit kernel's last CTAs free instead of waiting for the slowest of them, which they can
// because they read nothing the unsplit kernel writes (both only add into dQ, atomically); each
// waits for the unsplit grid before it exits, so that the reduce and later work see both grids'
// results.
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/grid_dependency.cuh"
#include "cuda/common/programmatic_launch.h"
#include "cuda/common/tile_io.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/common/warp_gemm_swizzled.cuh"
#include "cuda/sm80/dq_layout.h"
#include "cuda/sm80/fwd_kv_stream.cuh"
#include "cuda/sm80/launch.h"
#include "cuda/sm80/tile_config.h"

namespace flashvision::detail::sm80 {

/// Compile-time geometry of the backward kernel for one head-dim bucket and tile variant.
template <int kHeadDim, int kVariant>
struct BwdTraits {
  static constexpr BwdTile kTile = bwd_tile(kHeadDim, kVariant);
  static constexpr int kBlockM = kTile.block_m;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kWarps = kTile.warps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kDim = kHeadDim;
  static constexpr int kLd = padded(kHeadDim);  // pitch of the K and V tiles
  static constexpr bool kQuerySwizzled = bwd_query_swizzled(kHeadDim);
  static constexpr int kLdQ = bwd_query_pitch(kHeadDim);  // pitch of the Q and dO tiles
  static constexpr int kLdM = padded(kBlockM);  // pitch of the P^T and dS^T tiles
  static constexpr int kSlotBytes = static_cast<int>(bwd_query_slot_bytes(kHeadDim, kVariant));
  // The swizzle's XOR assumes Q and dO tiles start on a 128-byte line: after K, V, P^T, dS^T and
  // whole slots.
  static_assert(!kQuerySwizzled ||
                    (kSlotBytes % 128 == 0 && (2 * kBlockN * (kLd + kLdM) * 2) % 128 == 0 &&
                     (kBlockM * kLdQ * 2) % 128 == 0),
                "swizzled Q and dO tiles start on 128-byte lines");
  static constexpr bool kTwoSlots = kTile.query_slots == 2;
  // Each GEMM's output split over the warps for the fewest shared-memory loads per mma (the
  // kernel is bound by ldmatrix bandwidth): S^T and dP^T (keys x queries), dK and dV (keys x
  // head dim), dQ (queries x head dim).
  static constexpr WarpGrid kSdp = warp_grid(kBlockN, kBlockM, kWarps, kTile.sdp_key_warps);
  // With kRolesSplitSdp, half of the warps compute S^T and the other half dP^T, each GEMM split
  // over its half for the fewest loads: every operand is then loaded by fewer warps.
  static constexpr int kSdpHalfWarps = kWarps / 2;
  static constexpr WarpGrid kSdpHalf = warp_grid(kBlockN, kBlockM, kSdpHalfWarps);
  // With warp groups (kRolesGroups) each group also owns one of dV and dK over its half of the
  // warps, and half of dQ's columns, in dq_passes passes.
  static constexpr WarpGrid kKvGroup = warp_grid(kBlockN, kHeadDim, kSdpHalfWarps);
  static constexpr int kDqGroupPassDim = kHeadDim / (2 * kTile.dq_passes);
  static constexpr WarpGrid kDqGroup = warp_grid(kBlockM, kDqGroupPassDim, kSdpHalfWarps);
  static constexpr WarpGrid kKv = warp_grid(kBlockN, kHeadDim, kWarps);
  static constexpr int kDqPassDim = kHeadDim / kTile.dq_passes;  // dQ columns per pass
  static constexpr WarpGrid kDq = warp_grid(kBlockM, kDqPassDim, kWarps);
  static_assert(kBlockM > 0, "the bucket has this tile variant");
  static_assert(kTile.query_slots == 1 || kTile.query_slots == 2, "one or two query slots");
  static_assert(kDqPassDim * kTile.dq_passes == kHeadDim, "dQ passes split the head dim evenly");
  static_assert(kSdp.row_warps > 0 && kKv.row_warps > 0 && kDq.row_warps > 0 &&
                    kSdpHalf.row_warps > 0 && kKvGroup.row_warps > 0 && kDqGroup.row_warps > 0 &&
                    kDqGroupPassDim * 2 * kTile.dq_passes == kHeadDim,
                "every backward GEMM needs a warp grid of whole mma tiles");
};

/// Shared-memory carve-up of the backward kernel: K, V, P^T, dS^T, then the query slots, each
/// [Q block][dO block][LSE][D] (bwd_query_slot_bytes apart). The pointers name one slot.
template <typename T, int kHeadDim, int kVariant>
struct BwdSmem {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  T* k;
  T* v;
  T* pt;   ///< P^T [kBlockN][kLdM]
  T* dst;  ///< dS^T [kBlockN][kLdM]
  T* q;
  T* dout;
  float* lse_log2;  ///< LSE * log2(e) of the block's rows (+inf for rows that saw no key)
  float* dvec;      ///< rowsum(dO * O) of the block's rows

  __device__ explicit BwdSmem(unsigned char* raw) {
    k = reinterpret_cast<T*>(raw);
    v = k + Tr::kBlockN * Tr::kLd;
    pt = v + Tr::kBlockN * Tr::kLd;
    dst = pt + Tr::kBlockN * Tr::kLdM;
    q = dst + Tr::kBlockN * Tr::kLdM;
    dout = q + Tr::kBlockM * Tr::kLdQ;
    lse_log2 = reinterpret_cast<float*>(dout + Tr::kBlockM * Tr::kLdQ);
    dvec = lse_log2 + Tr::kBlockM;
  }

  /// The same carve-up naming query slot `slot`.
  __device__ BwdSmem at_slot(int slot) const {
    static_assert(Tr::kSlotBytes % 16 == 0, "slots keep the 16-byte alignment of cp.async");
    BwdSmem s = *this;
    s.q = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(q) + slot * Tr::kSlotBytes);
    s.dout = s.q + Tr::kBlockM * Tr::kLdQ;
    s.lse_log2 = reinterpret_cast<float*>(s.dout + Tr::kBlockM * Tr::kLdQ);
    s.dvec = s.lse_log2 + Tr::kBlockM;
    return s;
  }
};

/// One query block's inputs, all by cp.async: Q and dO, and LSE (log2 units) and D of its rows
/// from the preprocessed workspaces, so that no thread stalls on a global load here (a plain LSE
/// load held two warps for a memory latency before their dQ work on every step).
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void load_query_block(const BwdParams& p,
                                                 const BwdSmem<T, kHeadDim, kVariant>& sm,
                                                 const SeqRange& r, int seq, int head, int m0) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  static_assert(2 * Tr::kBlockM <= Tr::kThreads, "one thread per LSE or D value");
  const int rows_valid = min(Tr::kBlockM, r.q_len - m0);
  const int64_t row = r.q_begin + m0;
  const T* q = operand_at<const T>(p.q, seq, row, head);
  const T* dout = operand_at<const T>(p.dout, seq, row, head);
  if constexpr (Tr::kQuerySwizzled) {
    using Stream = TileStream<T, Tr::kBlockM, kHeadDim, Tr::kThreads, true>;
    Stream::load(ptx::smem_addr(sm.q), q, p.q.row_stride, rows_valid, p.shape.head_dim, p.q.data);
    Stream::load(ptx::smem_addr(sm.dout), dout, p.dout.row_stride, rows_valid, p.shape.head_dim,
                 p.dout.data);
  } else {
    load_tile_async<T, Tr::kBlockM, kHeadDim, Tr::kThreads>(sm.q, q, p.q.row_stride, rows_valid,
                                                            p.shape.head_dim, p.q.data);
    load_tile_async<T, Tr::kBlockM, kHeadDim, Tr::kThreads>(
        sm.dout, dout, p.dout.row_stride, rows_valid, p.shape.head_dim, p.dout.data);
  }
  // Rows past the sequence get 0 for both: their Q and dO rows are zero-filled, so P = 1 there
  // only meets zero dO rows (dV) and dS = P (0 - 0) = 0 (dK; their dQ rows are not stored).
  const int t = static_cast<int>(threadIdx.x);
  if (t < 2 * Tr::kBlockM) {
    const bool is_lse = t < Tr::kBlockM;
    const int i = is_lse ? t : t - Tr::kBlockM;
    const float* ws = is_lse ? p.lse_log2 : p.dvec;
    float* dst = is_lse ? sm.lse_log2 : sm.dvec;
    const bool valid = i < rows_valid;
    const float* src = valid ? ws + head * p.accum_rows + r.q_ws_row + m0 + i : ws;
    ptx::cp_async_4(ptx::smem_addr(dst + i), src, valid);
  }
}

/// acc += a warp tile of S^T = K Q^T or dP^T = V dO^T over the head dim: `keys` is the warp's first
/// row of K or V (padded rows), `queries` its first row of Q or dO (BwdTraits::kLdQ apart,
/// swizzled where kQuerySwizzled).
template <typename Tr, typename T, int kMT, int kNT>
__device__ __forceinline__ void keys_by_queries(float (&acc)[kMT][kNT][4], const T* keys,
                                                const T* queries, int lane) {
  if constexpr (Tr::kQuerySwizzled) {
    warp_gemm_ss_swizzled_b<T, kMT, kNT, Tr::kDim, false, Tr::kLdQ, false>(
        acc, ptx::smem_addr(keys), Tr::kLd, ptx::smem_addr(queries), lane);
  } else {
    warp_gemm_ss<T, kMT, kNT, Tr::kDim, false, false>(acc, ptx::smem_addr(keys), Tr::kLd,
                                                      ptx::smem_addr(queries), Tr::kLd, lane);
  }
}

/// acc += a warp tile of dV = P^T dO or dK = dS^T Q over the block's query rows: `a_warp` is the
/// warp's first row of P^T or dS^T, `query_tile` the whole dO or Q tile and `dim0` the warp's first
/// column of it.
template <typename Tr, typename T, int kMT, int kNT>
__device__ __forceinline__ void probs_by_query_rows(float (&acc)[kMT][kNT][4], uint32_t a_warp,
                                                    const T* query_tile, int dim0, int lane) {
  if constexpr (Tr::kQuerySwizzled) {
    warp_gemm_ss_swizzled_b<T, kMT, kNT, Tr::kBlockM, true, Tr::kLdQ, false>(
        acc, a_warp, Tr::kLdM, ptx::smem_addr(query_tile), lane, dim0);
  } else {
    warp_gemm_ss<T, kMT, kNT, Tr::kBlockM, false, true>(
        acc, a_warp, Tr::kLdM, ptx::smem_addr(query_tile + dim0), Tr::kLd, lane);
  }
}

/// P = exp2(S scale_log2 - LSE) of one key and two adjacent queries (query, query + 1). kMasked:
/// keys at or past key_end, or (causal) past diag + query, get P = 0.
template <bool kMasked>
__device__ __forceinline__ void probability_pair(float (&prob)[2], float s0, float s1,
                                                 float2 lse_log2, float scale_log2, int key,
                                                 int query, int key_end, bool causal, int diag) {
  prob[0] = ptx::exp2_approx(fmaf(s0, scale_log2, -lse_log2.x));
  prob[1] = ptx::exp2_approx(fmaf(s1, scale_log2, -lse_log2.y));
  if constexpr (kMasked) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if (key >= key_end || (causal && key >= diag + query + e)) prob[e] = 0.0f;
    }
  }
}

/// Writes P^T = exp2(S^T scale_log2 - LSE) and dS^T = P^T (dP^T - D) of a warp's tiles to shared
/// memory. kMasked: keys at or past key_end, or (causal) past diag + query, get P = 0. Only blocks
/// that cross the sequence end or the diagonal take the masked copy, so the others issue none of
/// its per-element index arithmetic (predicated off, it still cost an issue slot per instruction
/// and its dependent integer chains stalled the two warps a scheduler has).
template <typename T, int kMT, int kNT, int kLdM, bool kMasked>
__device__ __forceinline__ void write_probabilities_and_ds(
    const float (&s)[kMT][kNT][4], const float (&dp)[kMT][kNT][4], const float2 (&lse_log2)[kNT],
    const float2 (&dvec)[kNT], float scale_log2, T* pt, T* dst, int key0, int query0, int key_end,
    bool causal, int diag, int lane) {
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = key0 + m * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        const int query = query0 + n * 8 + 2 * (lane % 4);
        float prob[2];
        probability_pair<kMasked>(prob, s[m][n][2 * half], s[m][n][2 * half + 1], lse_log2[n],
                                  scale_log2, key, query, key_end, causal, diag);
        const float ds0 = prob[0] * (dp[m][n][2 * half] - dvec[n].x);
        const float ds1 = prob[1] * (dp[m][n][2 * half + 1] - dvec[n].y);
        *reinterpret_cast<uint32_t*>(pt + key * kLdM + query) = ptx::pack2<T>(prob[0], prob[1]);
        *reinterpret_cast<uint32_t*>(dst + key * kLdM + query) = ptx::pack2<T>(ds0, ds1);
      }
    }
  }
}

/// P^T and dS^T of one query block into shared memory (warps split keys x queries).
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void probabilities_and_ds(const BwdParams& p,
                                                     const BwdSmem<T, kHeadDim, kVariant>& sm,
                                                     const SeqRange& r, int n0, int m0) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kSdp.m_tiles, kNT = Tr::kSdp.n_tiles;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int key0 = (warp % Tr::kSdp.row_warps) * kMT * 16;
  const int query0 = (warp / Tr::kSdp.row_warps) * kNT * 8;
  float s[kMT][kNT][4], dp[kMT][kNT][4];
  clear(s);
  clear(dp);
  keys_by_queries<Tr>(s, sm.k + key0 * Tr::kLd, sm.q + query0 * Tr::kLdQ, lane);
  keys_by_queries<Tr>(dp, sm.v + key0 * Tr::kLd, sm.dout + query0 * Tr::kLdQ, lane);
  // The lane's LSE and D pairs once, before the stores below: read inside the store loop they
  // were reloaded after every store (ptxas cannot tell that P^T and dS^T do not alias them).
  float2 lse_log2[kNT], dvec[kNT];
#pragma unroll
  for (int n = 0; n < kNT; ++n) {
    const int query = query0 + n * 8 + 2 * (lane % 4);
    lse_log2[n] = *reinterpret_cast<const float2*>(sm.lse_log2 + query);
    dvec[n] = *reinterpret_cast<const float2*>(sm.dvec + query);
  }
  const ShapeParams& sh = p.shape;
  // Key indices below are relative to the block, query indices relative to the query block: key k
  // is visible to query q when k < key_end and, under the causal mask, k < diag + q.
  const int key_end = r.k_len - n0;
  const int diag = m0 + 1 + r.k_len - r.q_len - n0;
  const bool needs_mask = Tr::kBlockN > key_end || (sh.causal && Tr::kBlockN - 1 >= diag);
  if (needs_mask) {
    write_probabilities_and_ds<T, kMT, kNT, Tr::kLdM, true>(s, dp, lse_log2, dvec, sh.scale_log2,
                                                            sm.pt, sm.dst, key0, query0, key_end,
                                                            sh.causal, diag, lane);
  } else {
    write_probabilities_and_ds<T, kMT, kNT, Tr::kLdM, false>(s, dp, lse_log2, dvec, sh.scale_log2,
                                                             sm.pt, sm.dst, key0, query0, key_end,
                                                             sh.causal, diag, lane);
  }
}

/// Writes P^T = exp2(S^T scale_log2 - LSE) of a warp's tiles to shared memory (masked as
/// write_probabilities_and_ds does).
template <typename T, int kMT, int kNT, int kLdM, bool kMasked>
__device__ __forceinline__ void write_probabilities(const float (&s)[kMT][kNT][4],
                                                    const float2 (&lse_log2)[kNT],
                                                    float scale_log2, T* pt, int key0, int query0,
                                                    int key_end, bool causal, int diag, int lane) {
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = key0 + m * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        const int query = query0 + n * 8 + 2 * (lane % 4);
        float prob[2];
        probability_pair<kMasked>(prob, s[m][n][2 * half], s[m][n][2 * half + 1], lse_log2[n],
                                  scale_log2, key, query, key_end, causal, diag);
        *reinterpret_cast<uint32_t*>(pt + key * kLdM + query) = ptx::pack2<T>(prob[0], prob[1]);
      }
    }
  }
}

/// Writes dS^T = P^T (dP^T - D) of a warp's tiles to shared memory, P^T read back from `pt` (in
/// T: the rounding the dV GEMM sees too; masked elements are 0 there).
template <typename T, int kMT, int kNT, int kLdM>
__device__ __forceinline__ void write_ds_from_probabilities(const float (&dp)[kMT][kNT][4],
                                                            const float2 (&dvec)[kNT], const T* pt,
                                                            T* dst, int key0, int query0,
                                                            int lane) {
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = key0 + m * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        const int query = query0 + n * 8 + 2 * (lane % 4);
        const float2 prob =
            ptx::unpack2<T>(*reinterpret_cast<const uint32_t*>(pt + key * kLdM + query));
        const float ds0 = prob.x * (dp[m][n][2 * half] - dvec[n].x);
        const float ds1 = prob.y * (dp[m][n][2 * half + 1] - dvec[n].y);
        *reinterpret_cast<uint32_t*>(dst + key * kLdM + query) = ptx::pack2<T>(ds0, ds1);
      }
    }
  }
}

/// The warp tile origin (key0, query0) of warp `group_warp` of a warp group in the S^T or dP^T
/// GEMM (Tr::kSdpHalf).
template <typename Tr>
__device__ __forceinline__ int2 sdp_group_origin(int group_warp) {
  return make_int2((group_warp % Tr::kSdpHalf.row_warps) * Tr::kSdpHalf.m_tiles * 16,
                   (group_warp / Tr::kSdpHalf.row_warps) * Tr::kSdpHalf.n_tiles * 8);
}

/// The S group's part of a step: S^T of its warp tile, then P^T into shared memory.
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void group_probabilities(const BwdParams& p,
                                                    const BwdSmem<T, kHeadDim, kVariant>& sm,
                                                    const SeqRange& r, int n0, int m0,
                                                    int group_warp, int lane) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kSdpHalf.m_tiles, kNT = Tr::kSdpHalf.n_tiles;
  const int2 origin = sdp_group_origin<Tr>(group_warp);
  const int key0 = origin.x, query0 = origin.y;
  float acc[kMT][kNT][4];
  clear(acc);
  keys_by_queries<Tr>(acc, sm.k + key0 * Tr::kLd, sm.q + query0 * Tr::kLdQ, lane);
  float2 lse_log2[kNT];
#pragma unroll
  for (int n = 0; n < kNT; ++n) {
    lse_log2[n] = *reinterpret_cast<const float2*>(sm.lse_log2 + query0 + n * 8 + 2 * (lane % 4));
  }
  const ShapeParams& sh = p.shape;
  const int key_end = r.k_len - n0;
  const int diag = m0 + 1 + r.k_len - r.q_len - n0;
  const bool needs_mask = Tr::kBlockN > key_end || (sh.causal && Tr::kBlockN - 1 >= diag);
  if (needs_mask) {
    write_probabilities<T, kMT, kNT, Tr::kLdM, true>(acc, lse_log2, sh.scale_log2, sm.pt, key0,
                                                     query0, key_end, sh.causal, diag, lane);
  } else {
    write_probabilities<T, kMT, kNT, Tr::kLdM, false>(acc, lse_log2, sh.scale_log2, sm.pt, key0,
                                                      query0, key_end, sh.causal, diag, lane);
  }
}

/// The dP group's GEMM: dP^T of its warp tile.
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void group_dp(
    float (&dp)[BwdTraits<kHeadDim, kVariant>::kSdpHalf.m_tiles]
               [BwdTraits<kHeadDim, kVariant>::kSdpHalf.n_tiles][4],
    const BwdSmem<T, kHeadDim, kVariant>& sm, int group_warp, int lane) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kSdpHalf.m_tiles, kNT = Tr::kSdpHalf.n_tiles;
  const int2 origin = sdp_group_origin<Tr>(group_warp);
  clear(dp);
  keys_by_queries<Tr>(dp, sm.v + origin.x * Tr::kLd, sm.dout + origin.y * Tr::kLdQ, lane);
}

/// The dP group's stores: dS^T of its warp tile from its dP^T and the P^T in shared memory.
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void group_ds(
    const float (&dp)[BwdTraits<kHeadDim, kVariant>::kSdpHalf.m_tiles]
                     [BwdTraits<kHeadDim, kVariant>::kSdpHalf.n_tiles][4],
    const BwdSmem<T, kHeadDim, kVariant>& sm, int group_warp, int lane) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kSdpHalf.m_tiles, kNT = Tr::kSdpHalf.n_tiles;
  const int2 origin = sdp_group_origin<Tr>(group_warp);
  float2 dvec[kNT];
#pragma unroll
  for (int n = 0; n < kNT; ++n) {
    dvec[n] = *reinterpret_cast<const float2*>(sm.dvec + origin.y + n * 8 + 2 * (lane % 4));
  }
  write_ds_from_probabilities<T, kMT, kNT, Tr::kLdM>(dp, dvec, sm.pt, sm.dst, origin.x, origin.y,
                                                     lane);
}

/// P^T and dS^T of one query block with the warps in two groups (kRolesSplitSdp): the first
/// computes S^T and writes P^T, the second computes dP^T and, after the barrier that publishes P^T
/// (one that both groups reach at one instruction, as in bwd_key_block_groups), writes dS^T. Each
/// GEMM spreads over half of the warps with larger warp tiles, so K, V, Q and dO are each loaded by
/// fewer warps: a quarter to a third fewer shared-memory loads in this phase, which issues most of
/// the step's ldmatrix traffic.
template <typename T, int kHeadDim, int kVariant>
__device__ __forceinline__ void probabilities_and_ds_split(const BwdParams& p,
                                                           const BwdSmem<T, kHeadDim, kVariant>& sm,
                                                           const SeqRange& r, int n0, int m0) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr WarpGrid kGrid = Tr::kSdpHalf;
  constexpr int kMT = kGrid.m_tiles, kNT = kGrid.n_tiles;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const bool scores_group = warp < Tr::kSdpHalfWarps;
  const int group_warp = scores_group ? warp : warp - Tr::kSdpHalfWarps;
  const int key0 = (group_warp % kGrid.row_warps) * kMT * 16;
  const int query0 = (group_warp / kGrid.row_warps) * kNT * 8;
  float acc[kMT][kNT][4];
  clear(acc);
  if (scores_group) {
    keys_by_queries<Tr>(acc, sm.k + key0 * Tr::kLd, sm.q + query0 * Tr::kLdQ, lane);
    float2 lse_log2[kNT];
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      lse_log2[n] =
          *reinterpret_cast<const float2*>(sm.lse_log2 + query0 + n * 8 + 2 * (lane % 4));
    }
    const ShapeParams& sh = p.shape;
    const int key_end = r.k_len - n0;
    const int diag = m0 + 1 + r.k_len - r.q_len - n0;
    const bool needs_mask = Tr::kBlockN > key_end || (sh.causal && Tr::kBlockN - 1 >= diag);
    if (needs_mask) {
      write_probabilities<T, kMT, kNT, Tr::kLdM, true>(acc, lse_log2, sh.scale_log2, sm.pt, key0,
                                                       query0, key_end, sh.causal, diag, lane);
    } else {
      write_probabilities<T, kMT, kNT, Tr::kLdM, false>(acc, lse_log2, sh.scale_log2, sm.pt, key0,
                                                        query0, key_end, sh.causal, diag, lane);
    }
  } else {
    keys_by_queries<Tr>(acc, sm.v + key0 * Tr::kLd, sm.dout + query0 * Tr::kLdQ, lane);
  }
  __syncthreads();  // the first group's P^T is in
  if (!scores_group) {
    float2 dvec[kNT];
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      dvec[n] = *reinterpret_cast<const float2*>(sm.dvec + query0 + n * 8 + 2 * (lane % 4));
    }
    write_ds_from_probabilities<T, kMT, kNT, Tr::kLdM>(acc, dvec, sm.pt, sm.dst, key0, query0,
                                                       lane);
  }
}

/// Adds a warp's dQ tiles of one query block and pass into the fp32 workspace, laid out as kTiled
/// says (dq_layout.h). `row_group` is where the 8-row group that holds the block's first row starts
/// (the same offset in both layouts), `first_row` that row within it, and `pass_col` the pass's
/// first column. kChecked: only rows < rows_valid and columns < cols_valid of the block and pass
/// (full blocks skip the checks, each a branch around one atomic). kOrdered: plain
/// read-modify-write (deterministic mode, where only this thread of this CTA ever touches these
/// elements, in a fixed order), else atomics. The lane's element offset is derived here from a
/// volatile thread index: ptxas otherwise hoisted one 64-bit address per element out of the query
/// loop and spilled them. kGridWarps > 0: the grid spans that many warps (a warp group), the warp
/// index taken modulo it.
template <bool kTiled, bool kOrdered, bool kChecked, int kDqRowWarps, int kGridWarps, int kMT,
          int kNT>
__device__ __forceinline__ void add_dq_tiles(float* row_group, int first_row, int pass_col,
                                             const float (&dq)[kMT][kNT][4], int rows_valid,
                                             int cols_valid, int head_dim) {
  const int tid = ptx::thread_index_here();
  const int warp = kGridWarps > 0 ? tid / 32 % kGridWarps : tid / 32, lane = tid % 32;
  const int lane_row = (warp % kDqRowWarps) * kMT * 16 + lane / 4;
  const int lane_col = (warp / kDqRowWarps) * kNT * 8 + 2 * (lane % 4);
  // From the group on the lane's offset fits 32 bits; the tiles' rows and columns are 8 apart,
  // the same steps in both layouts but for the column step (dq_offset).
  float* lane_dst =
      row_group + dq_offset<kTiled>(first_row + lane_row, pass_col + lane_col, head_dim);
  constexpr int kColStep = dq_column_step<kTiled>;
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m * 16 + half * 8;
      if (kChecked && lane_row + row >= rows_valid) continue;
      float* dst = lane_dst + row * head_dim;
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        if (kChecked && lane_col + n * 8 >= cols_valid) continue;
        const float lo = dq[m][n][2 * half], hi = dq[m][n][2 * half + 1];
        if constexpr (kOrdered) {
          dst[n * kColStep] += lo;
          dst[n * kColStep + 1] += hi;
        } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          // Hopper adds a float2 in one atomic: half the atomic instructions of scalar ones.
          atomicAdd(reinterpret_cast<float2*>(dst + n * kColStep), make_float2(lo, hi));
#else
          atomicAdd(dst + n * kColStep, lo);
          atomicAdd(dst + n * kColStep + 1, hi);
#endif
        }
      }
    }
  }
}

/// One pass's dQ tiles added in the workspace layout kTiled: ordered in deterministic mode, else by
/// atomics, unchecked on full blocks (add_dq_tiles).
template <bool kTiled, int kDqRowWarps, int kGridWarps, int kFullRows, int kMT, int kNT>
__device__ __forceinline__ void add_dq_pass(const BwdParams& p, float* row_group, int first_row,
                                            int pass_col, const float (&dq)[kMT][kNT][4],
                                            int rows_valid, int head_dim, bool full_dim) {
  const int cols_valid = head_dim - pass_col;
  if (p.deterministic) {
    add_dq_tiles<kTiled, true, true, kDqRowWarps, kGridWarps>(row_group, first_row, pass_col, dq,
                                                              rows_valid, cols_valid, head_dim);
  } else if (rows_valid == kFullRows && full_dim) {
    add_dq_tiles<kTiled, false, false, kDqRowWarps, kGridWarps>(row_group, first_row, pass_col, dq,
                                                                rows_valid, cols_valid, head_dim);
  } else {
    add_dq_tiles<kTiled, false, true, kDqRowWarps, kGridWarps>(row_group, first_row, pass_col, dq,
                                                               rows_valid, cols_valid, head_dim);
  }
}

/// dQ of one query block = dS K, added into the fp32 workspace, in Tr::kTile.dq_passes passes over
/// column ranges of the head dim (the atomics of one drain under the next one's GEMM). kGroup:
/// only warp group `group`'s half of the columns, over the group's warps (kRolesGroups).
template <typename T, int kHeadDim, int kVariant, bool kGroup = false>
__device__ __forceinline__ void accumulate_dq(const BwdParams& p,
                                              const BwdSmem<T, kHeadDim, kVariant>& sm,
                                              const SeqRange& r, int head, int m0, int group = 0) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr WarpGrid kGrid = kGroup ? Tr::kDqGroup : Tr::kDq;
  constexpr int kPassDim = kGroup ? Tr::kDqGroupPassDim : Tr::kDqPassDim;
  constexpr int kGridWarps = kGroup ? Tr::kSdpHalfWarps : 0;
  constexpr int kMT = kGrid.m_tiles, kNT = kGrid.n_tiles;
  const int cta_warp = static_cast<int>(threadIdx.x) / 32;
  const int warp = kGroup ? cta_warp % Tr::kSdpHalfWarps : cta_warp;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int query0 = (warp % kGrid.row_warps) * kMT * 16;
  const int head_dim = p.shape.head_dim;
  const int rows_valid = min(Tr::kBlockM, r.q_len - m0);
  const int64_t block_row = head * p.dq_head_rows + r.q_ws_row + m0;
  // Tiled, dq_head_rows is a multiple of 8: the groups start at multiples of 8 from dq_accum on.
  const int first_row = static_cast<int>(block_row & 7);
  float* row_group = p.dq_accum + (block_row - first_row) * head_dim;
  const int group_col = kGroup ? group * (kHeadDim / 2) : 0;
  const auto add_pass = [&](int pass) {
    const int pass_col = group_col + pass * kPassDim;
    const int dim0 = pass_col + (warp / kGrid.row_warps) * kNT * 8;
    float dq[kMT][kNT][4];
    clear(dq);
    warp_gemm_ss<T, kMT, kNT, Tr::kBlockN, true, true>(
        dq, ptx::smem_addr(sm.dst + query0), Tr::kLdM, ptx::smem_addr(sm.k + dim0), Tr::kLd, lane);
    const bool full_dim = head_dim == kHeadDim;
    if (p.dq_layout == kDqTiles) {
      add_dq_pass<true, kGrid.row_warps, kGridWarps, Tr::kBlockM>(
          p, row_group, first_row, pass_col, dq, rows_valid, head_dim, full_dim);
    } else {
      add_dq_pass<false, kGrid.row_warps, kGridWarps, Tr::kBlockM>(
          p, row_group, first_row, pass_col, dq, rows_valid, head_dim, full_dim);
    }
  };
  if constexpr (Tr::kTile.dq_passes <= 2) {
#pragma unroll
    for (int pass = 0; pass < Tr::kTile.dq_passes; ++pass) add_pass(pass);
  } else {
    // The four passes of D = 512 stay a loop: unrolled, ptxas overlapped them at 255 registers
    // and spilled 40 bytes; rolled, it needs 252 and spills none.
#pragma unroll 1
    for (int pass = 0; pass < Tr::kTile.dq_passes; ++pass) add_pass(pass);
  }
}

/// Writes a warp's dK or dV rows (times `scale`) for keys < keys_valid, columns < head_dim.
template <typename T, int kMT, int kNT>
__device__ __forceinline__ void store_kv_grad(const TensorParams& t,
                                              const float (&acc)[kMT][kNT][4], float scale,
                                              int seq, int64_t first_row, int head_kv, int key0,
                                              int dim0, int keys_valid, int head_dim, int lane) {
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = key0 + m * 16 + lane / 4 + half * 8;
      if (key >= keys_valid) continue;
      T* row = operand_at<T>(t, seq, first_row + key, head_kv);
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        const int col = dim0 + n * 8 + 2 * (lane % 4);
        if (col < head_dim) {
          *reinterpret_cast<uint32_t*>(row + col) =
              ptx::pack2<T>(acc[m][n][2 * half] * scale, acc[m][n][2 * half + 1] * scale);
        }
      }
    }
  }
}

/// Writes a warp's fp32 partial dK or dV rows (keys < keys_valid, columns < head_dim) to the
/// rows of split workspace `ws` that start at `first_row`.
template <int kMT, int kNT>
__device__ __forceinline__ void store_kv_partial(float* ws, const float (&acc)[kMT][kNT][4],
                                                 int64_t first_row, int key0, int dim0,
                                                 int keys_valid, int head_dim, int lane) {
#pragma unroll
  for (int m = 0; m < kMT; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = key0 + m * 16 + lane / 4 + half * 8;
      if (key >= keys_valid) continue;
      float* row = ws + (first_row + key) * head_dim;
#pragma unroll
      for (int n = 0; n < kNT; ++n) {
        const int col = dim0 + n * 8 + 2 * (lane % 4);
        if (col < head_dim) {
          *reinterpret_cast<float2*>(row + col) =
              make_float2(acc[m][n][2 * half], acc[m][n][2 * half + 1]);
        }
      }
    }
  }
}

/// CTAs per tile of the split kernel: the parts of a last-wave split, else the grid's query
/// splits.
__device__ __forceinline__ int split_count(const BwdParams& p) {
  return p.tail_parts > 1 ? p.tail_parts : p.num_splits;
}

/// The CTA's query split: the fastest part of the grid. Re-read from blockIdx where needed rather
/// than kept in a register through the query loop, which runs at the register limit.
template <bool kSplit>
__device__ __forceinline__ int query_split(const BwdParams& p) {
  if (!kSplit) return 0;
  unsigned cta;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(cta));  // volatile: not hoisted out of the loop
  return static_cast<int>(cta % static_cast<unsigned>(split_count(p)));
}

/// The first row of the split CTA's fp32 partial dK, dV for key block n0 of (seq, head_kv): in a
/// last-wave split its own kBlockN rows (CTA-major, params.h); else kv-head-major per query split
/// over all keys, sequences stacked (dense) or packed (varlen).
template <int kBlockN>
__device__ __forceinline__ int64_t partial_first_row(const BwdParams& p, const SeqRange& r, int seq,
                                                     int head_kv, int n0) {
  if (p.tail_parts > 1) return int64_t{blockIdx.x} * kBlockN;
  const ShapeParams& sh = p.shape;
  const int64_t seq_row = sh.cu_seqlens_k != nullptr ? r.k_begin : int64_t{seq} * sh.seqlen_k;
  return (int64_t{query_split<true>(p)} * sh.heads_kv + head_kv) * p.partial_rows + seq_row + n0;
}

/// Query blocks [first, first + count) that one CTA walks for one key block.
struct QueryBlockRange {
  int first;
  int count;
};

/// Split `split`'s contiguous share of the query blocks of key block n0: of the blocks that see
/// the key block, or, in deterministic mode, of all blocks (then a dQ row belongs to one CTA
/// whatever the key block, so its ordered read-modify-write needs no atomics), clipped to the
/// visible ones.
__device__ __forceinline__ QueryBlockRange query_block_range(const BwdParams& p, const SeqRange& r,
                                                             int n0, int split, int splits,
                                                             int block_m) {
  // Query rows that see key n0 under the causal mask start at n0 - (k_len - q_len).
  const int first_row = p.shape.causal ? max(0, n0 - (r.k_len - r.q_len)) : 0;
  const int visible = first_row / block_m;
  const int total = (r.q_len + block_m - 1) / block_m;
  const int base = p.deterministic ? 0 : visible;
  const int64_t span = max(0, total - base);
  const int begin = base + static_cast<int>(span * split / splits);
  const int end = base + static_cast<int>(span * (split + 1) / splits);
  const int first = max(begin, visible);
  return {first, max(0, end - first)};
}

/// dK and dV of one key block of one kv head (over the CTA's query split). kSplit: written as
/// fp32 partials; a template parameter so that the unsplit kernel keeps its registers (the query
/// loop runs at the 255-register limit, and the second store path cost spill bytes).
/// With two query slots the next query block loads into the other slot at the start of each step,
/// so it has the whole step to land and the barrier that freed the single slot goes; dQ (whose
/// atomics then drain under the dV, dK GEMMs) comes first.
template <typename T, int kHeadDim, int kVariant, bool kSplit, bool kSdpSplit>
__device__ __forceinline__ void bwd_key_block(const BwdParams& p,
                                              const BwdSmem<T, kHeadDim, kVariant>& sm,
                                              int n_block, int seq, int head_kv) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kKv.m_tiles, kNT = Tr::kKv.n_tiles;
  constexpr bool kTwoSlots = Tr::kTwoSlots;
  const ShapeParams& sh = p.shape;
  const SeqRange r = seq_range(sh, seq);
  const int n0 = n_block * Tr::kBlockN;
  if (n0 >= r.k_len) return;
  const int keys_valid = min(Tr::kBlockN, r.k_len - n0);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int key0 = (warp % Tr::kKv.row_warps) * kMT * 16;
  const int dim0 = (warp / Tr::kKv.row_warps) * kNT * 8;

  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.k, operand_at<const T>(p.k, seq, r.k_begin + n0, head_kv), p.k.row_stride, keys_valid,
      sh.head_dim, p.k.data);
  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.v, operand_at<const T>(p.v, seq, r.k_begin + n0, head_kv), p.v.row_stride, keys_valid,
      sh.head_dim, p.v.data);

  const QueryBlockRange range = query_block_range(p, r, n0, query_split<kSplit>(p),
                                                  kSplit ? split_count(p) : 1, Tr::kBlockM);
  const int m_first = range.first, m_count = range.count;
  const int m_end = m_first + m_count;
  // Each head's walk starts here and wraps around at m_end (query_stagger, params.h).
  const int m_start = m_count > 0 ? m_first + n_block % p.query_stagger % m_count : m_first;
  const int steps = m_count * sh.group;

  float acc_dk[kMT][kNT][4], acc_dv[kMT][kNT][4];
  clear(acc_dk);
  clear(acc_dv);
  if (steps > 0) {
    load_query_block(p, sm, r, seq, head_kv * sh.group, m_start * Tr::kBlockM);
  }
  ptx::cp_async_commit();
  const uint32_t pt_warp = ptx::smem_addr(sm.pt + key0 * Tr::kLdM);
  const uint32_t dst_warp = ptx::smem_addr(sm.dst + key0 * Tr::kLdM);
  // The step's head and query block advance by increments (blocks of one head, then the next
  // head of the group) rather than by a division of the step by m_count on every step.
  int head = head_kv * sh.group, m_block = m_start;
  for (int step = 0; step < steps; ++step) {
    const int m0 = m_block * Tr::kBlockM;
    const int next_m_block = m_block + 1 == m_end ? m_first : m_block + 1;
    const int next_head = next_m_block == m_start ? head + 1 : head;
    const BwdSmem<T, kHeadDim, kVariant> cur = kTwoSlots ? sm.at_slot(step & 1) : sm;
    ptx::cp_async_wait<0>();
    // This step's Q, dO, LSE, D are in; the last step's reads of dS^T (and with two slots, of the
    // other slot) are done.
    __syncthreads();
    if (kTwoSlots && step + 1 < steps) {
      load_query_block(p, sm.at_slot((step + 1) & 1), r, seq, next_head,
                       next_m_block * Tr::kBlockM);
      ptx::cp_async_commit();
    }
    if constexpr (kSdpSplit) {
      probabilities_and_ds_split(p, cur, r, n0, m0);
    } else {
      probabilities_and_ds(p, cur, r, n0, m0);
    }
    __syncthreads();  // P^T and dS^T complete
    if constexpr (kTwoSlots) accumulate_dq(p, cur, r, head, m0);
    probs_by_query_rows<Tr>(acc_dv, pt_warp, cur.dout, dim0, lane);
    probs_by_query_rows<Tr>(acc_dk, dst_warp, cur.q, dim0, lane);
    if constexpr (!kTwoSlots) {
      __syncthreads();  // Q, dO, P^T free: the next block's loads overlap dQ
      if (step + 1 < steps) {
        load_query_block(p, sm, r, seq, next_head, next_m_block * Tr::kBlockM);
        ptx::cp_async_commit();
      }
      accumulate_dq(p, sm, r, head, m0);
    }
    head = next_head;
    m_block = next_m_block;
  }
  ptx::cp_async_wait<0>();
  if constexpr (kSplit) {
    const int64_t first = partial_first_row<Tr::kBlockN>(p, r, seq, head_kv, n0);
    store_kv_partial<kMT, kNT>(p.dk_partial, acc_dk, first, key0, dim0, keys_valid, sh.head_dim,
                               lane);
    store_kv_partial<kMT, kNT>(p.dv_partial, acc_dv, first, key0, dim0, keys_valid, sh.head_dim,
                               lane);
  } else {
    store_kv_grad<T, kMT, kNT>(p.dk, acc_dk, sh.scale, seq, r.k_begin + n0, head_kv, key0, dim0,
                               keys_valid, sh.head_dim, lane);
    store_kv_grad<T, kMT, kNT>(p.dv, acc_dv, 1.0f, seq, r.k_begin + n0, head_kv, key0, dim0,
                               keys_valid, sh.head_dim, lane);
  }
  __syncthreads();  // the next key block of this CTA reuses the K, V, dS^T tiles and slot 0
}

/// bwd_key_block with warp groups (kRolesGroups). The S group (warps 0..3) computes S^T, writes
/// P^T and accumulates dV; the dP group (warps 4..7) computes dP^T, writes dS^T and accumulates
/// dK; each adds dQ for half of the head dim. Each warp holds one of dK and dV over a 4-warp grid,
/// as many accumulators as two halves over 8 warps but with larger tiles (fewer ldmatrix loads),
/// and after the barrier that publishes P^T the groups run apart: the S group's dV GEMM overlaps
/// the dP group's dS^T stores, and only the S group's dQ waits (barrier 2) for dS^T.
template <typename T, int kHeadDim, int kVariant, bool kSplit>
__device__ __forceinline__ void bwd_key_block_groups(const BwdParams& p,
                                                     const BwdSmem<T, kHeadDim, kVariant>& sm,
                                                     int n_block, int seq, int head_kv) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kMT = Tr::kKvGroup.m_tiles, kNT = Tr::kKvGroup.n_tiles;
  constexpr bool kTwoSlots = Tr::kTwoSlots;
  const ShapeParams& sh = p.shape;
  const SeqRange r = seq_range(sh, seq);
  const int n0 = n_block * Tr::kBlockN;
  if (n0 >= r.k_len) return;
  const int keys_valid = min(Tr::kBlockN, r.k_len - n0);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = warp / Tr::kSdpHalfWarps;  // 0: S^T, P^T, dV; 1: dP^T, dS^T, dK
  const int group_warp = warp % Tr::kSdpHalfWarps;
  const int key0 = (group_warp % Tr::kKvGroup.row_warps) * kMT * 16;
  const int dim0 = (group_warp / Tr::kKvGroup.row_warps) * kNT * 8;

  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.k, operand_at<const T>(p.k, seq, r.k_begin + n0, head_kv), p.k.row_stride, keys_valid,
      sh.head_dim, p.k.data);
  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.v, operand_at<const T>(p.v, seq, r.k_begin + n0, head_kv), p.v.row_stride, keys_valid,
      sh.head_dim, p.v.data);

  const QueryBlockRange range =
      query_block_range(p, r, n0, query_split<kSplit>(p), kSplit ? split_count(p) : 1, Tr::kBlockM);
  const int m_first = range.first, m_count = range.count;
  const int m_end = m_first + m_count;
  const int m_start = m_count > 0 ? m_first + n_block % p.query_stagger % m_count : m_first;
  const int steps = m_count * sh.group;

  float acc[kMT][kNT][4];  // the S group's dV or the dP group's dK
  clear(acc);
  if (steps > 0) {
    load_query_block(p, sm, r, seq, head_kv * sh.group, m_start * Tr::kBlockM);
  }
  ptx::cp_async_commit();
  const uint32_t a_warp = ptx::smem_addr((group == 0 ? sm.pt : sm.dst) + key0 * Tr::kLdM);
  int head = head_kv * sh.group, m_block = m_start;
  for (int step = 0; step < steps; ++step) {
    const int m0 = m_block * Tr::kBlockM;
    const int next_m_block = m_block + 1 == m_end ? m_first : m_block + 1;
    const int next_head = next_m_block == m_start ? head + 1 : head;
    const BwdSmem<T, kHeadDim, kVariant> cur = kTwoSlots ? sm.at_slot(step & 1) : sm;
    ptx::cp_async_wait<0>();
    __syncthreads();  // as in bwd_key_block
    if (kTwoSlots && step + 1 < steps) {
      load_query_block(p, sm.at_slot((step + 1) & 1), r, seq, next_head,
                       next_m_block * Tr::kBlockM);
      ptx::cp_async_commit();
    }
    // dV = P^T dO, dK = dS^T Q: the group's operand B is dO or Q.
    const T* b_tile = group == 0 ? cur.dout : cur.q;
    // The barrier that publishes P^T sits where both groups reach it at one instruction: reached
    // from each group's branch (a per-warp barrier at two instructions), racecheck reported the
    // dP group's reads of Q for dK against the next step's Q copies on the far side of the step's
    // last barrier (bench/results/2026-11-30-s16). The dP group's dP^T lives across it.
    float dp[Tr::kSdpHalf.m_tiles][Tr::kSdpHalf.n_tiles][4];
    if (group == 0) {
      group_probabilities(p, cur, r, n0, m0, group_warp, lane);
      // Defined on this path too: undefined here, dp counted as live through the S group's whole
      // GEMM and softmax, and the kernels spilled (D = 128: 36 -> 280 bytes).
      clear(dp);
    } else {
      group_dp(dp, cur, group_warp, lane);
    }
    __syncthreads();  // P^T complete (the dP group has its dP^T)
    if (group == 0) {
      probs_by_query_rows<Tr>(acc, a_warp, b_tile, dim0, lane);
      if constexpr (kTwoSlots) {
        ptx::named_barrier_sync(2, Tr::kThreads);  // the dP group's dS^T is in
        accumulate_dq<T, kHeadDim, kVariant, true>(p, cur, r, head, m0, group);
      } else {
        // Orders nothing: it gives the S group as many barriers per step as the dP group (its
        // barrier 3). With one fewer, racecheck reported the dP group's reads of Q for dK against
        // the next step's Q copies, which the step's last __syncthreads orders (SASS:
        // bench/results/2026-11-30-s16).
        ptx::named_barrier_sync(4, Tr::kThreads / 2);
      }
    } else {
      group_ds(dp, cur, group_warp, lane);
      if constexpr (kTwoSlots) ptx::named_barrier_arrive(2, Tr::kThreads);
      ptx::named_barrier_sync(3, Tr::kThreads / 2);  // the group's dS^T complete for its dK
      probs_by_query_rows<Tr>(acc, a_warp, b_tile, dim0, lane);
      if constexpr (kTwoSlots)
        accumulate_dq<T, kHeadDim, kVariant, true>(p, cur, r, head, m0, group);
    }
    if constexpr (!kTwoSlots) {
      __syncthreads();  // Q, dO, P^T free and dS^T complete: the next block's loads overlap dQ
      if (step + 1 < steps) {
        load_query_block(p, sm, r, seq, next_head, next_m_block * Tr::kBlockM);
        ptx::cp_async_commit();
      }
      accumulate_dq<T, kHeadDim, kVariant, true>(p, sm, r, head, m0, group);
    }
    head = next_head;
    m_block = next_m_block;
  }
  ptx::cp_async_wait<0>();
  if constexpr (kSplit) {
    const int64_t first = partial_first_row<Tr::kBlockN>(p, r, seq, head_kv, n0);
    store_kv_partial<kMT, kNT>(group == 0 ? p.dv_partial : p.dk_partial, acc, first, key0, dim0,
                               keys_valid, sh.head_dim, lane);
  } else {
    store_kv_grad<T, kMT, kNT>(group == 0 ? p.dv : p.dk, acc, group == 0 ? 1.0f : sh.scale, seq,
                               r.k_begin + n0, head_kv, key0, dim0, keys_valid, sh.head_dim, lane);
  }
  __syncthreads();  // the next key block of this CTA reuses the K, V, dS^T tiles and slot 0
}

/// The tile (key block, kv head, sequence; or in deterministic mode kv head, sequence) of the
/// CTA: the split kernel runs split_count CTAs per tile, from tail_tile0 on in a last-wave split.
template <bool kSplit>
__device__ __forceinline__ int cta_tile(const BwdParams& p) {
  if (!kSplit) return static_cast<int>(blockIdx.x);
  if (p.tail_parts > 1) return p.tail_tile0 + static_cast<int>(blockIdx.x) / p.tail_parts;
  return static_cast<int>(blockIdx.x) / p.num_splits;
}

/// Grid: (query split, key block, kv head, sequence) folded into x, the split fastest; in
/// deterministic mode one CTA per (query split, kv head, sequence) walks all key blocks so that
/// dQ is summed in a fixed order.
template <typename T, int kHeadDim, int kVariant, bool kSplit, int kRoles>
__global__ void __launch_bounds__(BwdTraits<kHeadDim, kVariant>::kThreads)
    bwd_kernel(const __grid_constant__ BwdParams p) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // Every CTA is resident or done from here on: a split kernel queued after this one may start.
  if constexpr (!kSplit) ptx::launch_dependent_grids();
  const BwdSmem<T, kHeadDim, kVariant> sm(smem_raw);
  const int tile = cta_tile<kSplit>(p);
  const int blocks_per_head = p.deterministic ? 1 : p.num_n_blocks;
  const int bh = tile / blocks_per_head;
  const int head_kv = bh % p.shape.heads_kv, seq = bh / p.shape.heads_kv;
  const int n_first = p.deterministic ? 0 : tile % blocks_per_head;
  const int n_last = p.deterministic ? p.num_n_blocks : n_first + 1;
  for (int n_block = n_first; n_block < n_last; ++n_block) {
    if constexpr (kRoles == kRolesGroups) {
      bwd_key_block_groups<T, kHeadDim, kVariant, kSplit>(p, sm, n_block, seq, head_kv);
    } else {
      bwd_key_block<T, kHeadDim, kVariant, kSplit, kRoles == kRolesSplitSdp>(p, sm, n_block, seq,
                                                                             head_kv);
    }
  }
  // A split kernel that started early ends only after the unsplit grid (a no-op otherwise).
  if constexpr (kSplit) ptx::wait_for_prerequisite_grids();
}

/// The main kernel with warp roles `roles` (BwdWarpRoles).
template <typename T, int kHeadDim, int kVariant, bool kSplit>
auto* bwd_kernel_for(int roles) {
  if (roles == kRolesGroups) return &bwd_kernel<T, kHeadDim, kVariant, kSplit, kRolesGroups>;
  if (roles == kRolesSplitSdp) return &bwd_kernel<T, kHeadDim, kVariant, kSplit, kRolesSplitSdp>;
  return &bwd_kernel<T, kHeadDim, kVariant, kSplit, kRolesShared>;
}

/// Launches tile variant kVariant of the main kernel: the unsplit or split kernel over the whole
/// grid, or with a last-wave split the unsplit kernel over the tiles before tail_tile0 and then
/// the split kernel over the tail's parts, as a programmatic dependent of the unsplit one where
/// BwdParams::tail_early says.
template <typename T, int kHeadDim, int kVariant>
void launch_bwd(const BwdParams& params, cudaStream_t stream) {
  using Tr = BwdTraits<kHeadDim, kVariant>;
  constexpr int kSmem = static_cast<int>(bwd_smem_bytes(kHeadDim, kVariant));
  const auto launch = [&](auto* kernel, long long ctas, bool dependent = false) {
    if (ctas <= 0) return;
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
               "cudaFuncSetAttribute (sm80 backward)");
    launch_kernel(kernel, dim3(static_cast<unsigned>(ctas)), dim3(Tr::kThreads), kSmem, stream,
                  dependent, "the sm80 backward kernel launch", params);
  };
  auto* unsplit = bwd_kernel_for<T, kHeadDim, kVariant, false>(params.warp_roles);
  auto* split = bwd_kernel_for<T, kHeadDim, kVariant, true>(params.warp_roles);
  const long long tiles = static_cast<long long>(params.deterministic ? 1 : params.num_n_blocks) *
                          params.shape.batch * params.shape.heads_kv;
  if (params.tail_parts > 1) {
    launch(unsplit, params.tail_tile0);
    launch(split, (tiles - params.tail_tile0) * params.tail_parts,
           params.tail_tile0 > 0 && params.tail_early);
  } else if (params.num_splits > 1) {
    launch(split, tiles * params.num_splits);
  } else {
    launch(unsplit, tiles);
  }
}

/// The main kernel in the tile variant the host chose (params.tile_variant); variants the bucket
/// lacks are not instantiated.
template <DType kDType, int kHeadDim>
void run_bwd(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  auto* s = static_cast<cudaStream_t>(stream);
  if constexpr (bwd_tile(kHeadDim, 2).block_m > 0) {
    if (params.tile_variant == 2) return launch_bwd<T, kHeadDim, 2>(params, s);
  }
  if constexpr (bwd_tile(kHeadDim, 1).block_m > 0) {
    if (params.tile_variant == 1) return launch_bwd<T, kHeadDim, 1>(params, s);
  }
  launch_bwd<T, kHeadDim, 0>(params, s);
}

}  // namespace flashvision::detail::sm80
