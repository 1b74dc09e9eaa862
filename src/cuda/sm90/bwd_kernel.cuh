// sm90 backward main kernel: one CTA per (key block of 128 keys, kv head, sequence) walks the
// query blocks of every query head of its GQA group, as the sm80 backward does, with the GEMMs on
// wgmma. A producer warpgroup streams Q and dO blocks with TMA (one thread) and their LSE and D
// rows with cp.async (a second warp) into a two-slot ring; two consumer warpgroups own 64 keys
// each. Per query block a consumer
// computes S^T = K Q^T and dP^T = V dO^T (both operands in shared memory), P^T and dS^T = P^T (dP^T
// - D) in registers, dV += P^T dO and dK += dS^T Q with the probabilities as register A operands,
// stores dS^T transposed (stmatrix) so that dQ = dS K can read it as a K-major A operand, and adds
// its share of the dQ columns (whole panels of K, bwd_config.h's BwdTile) into the fp32 workspace,
// through shared staging and TMA reduce-adds at head dims 64 and 128 and with atomics elsewhere;
// where registers allow it issues the next step's S^T and dP^T before those adds
// (BwdConsumer::walk). The preprocess (D, LSE in log2 units) and dQ convert kernels are the sm80
// path's.
#pragma once

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/ptx.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/sm80/bwd_kernel.cuh"
#include "cuda/sm90/bwd_config.h"
#include "cuda/sm90/params.h"
#include "cuda/sm90/ptx_sm90.cuh"
#include "cuda/sm90/tile_config.h"
#include "cuda/sm90/wgmma_ops.cuh"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Compile-time geometry of the backward for one head-dim bucket.
template <int kHeadDim>
struct BwdTraits {
  static constexpr BwdTile kTile = bwd_tile(kHeadDim);
  static constexpr int kSwizzle = kTile.swizzle_bytes;
  static constexpr uint32_t kSwizzleMode = descriptor_swizzle_mode(kSwizzle);
  static constexpr int kPanelCols = kTile.panel_cols();
  static constexpr int kPanels = kTile.panels();
  /// dQ columns of a consumer (its first panel: consumer x kDqPanelStep), and those at the start
  /// of consumer 1's range that consumer 0 also computes and adds.
  static constexpr int kDqCols = kTile.dq_cols();
  static constexpr int kDqPanelStep = kPanels - kTile.dq_panels;
  static constexpr int kSharedDqCols = kTile.shared_dq_panels() * kPanelCols;
  static constexpr int kDqBoxes = kDqCols / kBwdDqBoxCols;
  /// Whether the next step's S^T and dP^T accumulators (64 registers) can be live next to dK, dV
  /// (D) and this step's dQ columns (kDqCols / 2) while those are added: ptxas fits D = 96 in
  /// R232 without spills, and spills 448 bytes at 128.
  static constexpr bool kScoresAhead = kHeadDim <= 96;
  static constexpr BwdSmemOffsets kOffsets = bwd_smem_offsets(kHeadDim);
  static constexpr uint32_t kKvBytes = kBwdBlockN * kHeadDim * 2;
  static constexpr uint32_t kQBytes = kBwdBlockM * kHeadDim * 2;
  static_assert(bwd_bucket_supported(kHeadDim), "a bucket the sm90 backward does not serve");
  static_assert(kPanels * kPanelCols == kHeadDim, "whole panels");
  static_assert(kBwdConsumers == 2 && kTile.dq_panels <= kPanels && kSharedDqCols >= 0,
                "the two consumers' dQ panels cover the head dim");
  static_assert(kBwdBlockN == 64 * kBwdConsumers, "64 keys per consumer warpgroup");
  static_assert(kDqCols % kBwdDqBoxCols == 0 && kSharedDqCols % kBwdDqBoxCols == 0 &&
                    kDqPanelStep * kPanelCols % kBwdDqBoxCols == 0,
                "dQ staging boxes cover whole column ranges");
  static_assert(kOffsets.dq_stage % 512 == 0 && kBwdDqBoxBytes % 512 == 0,
                "staging boxes aligned to the 64-byte swizzle's 512-byte period");
  // The consumers' raise draws on the registers the CTA was launched with (tile_config.h).
  static_assert(128 * (kBwdProducerRegisters + kBwdConsumers * kBwdConsumerRegisters) <=
                launch_registers(kBwdThreads));
  // Every panel starts 1024-byte aligned, where TMA's and wgmma's swizzle patterns agree.
  static_assert(kBwdBlockM * kSwizzle % 1024 == 0 && kBwdBlockN * kSwizzle % 1024 == 0);
};

/// Addresses of the backward's shared-memory regions (shared window for TMA, wgmma and barriers;
/// generic pointers for the LSE and D rows).
template <int kHeadDim>
struct BwdSmem {
  using Tr = BwdTraits<kHeadDim>;
  uint32_t base;
  unsigned char* generic;  ///< the same byte as `base`

  __device__ uint32_t k() const { return base + Tr::kOffsets.k; }
  __device__ uint32_t v() const { return base + Tr::kOffsets.v; }
  __device__ uint32_t q(int stage) const { return base + Tr::kOffsets.q + stage * Tr::kQBytes; }
  __device__ uint32_t dout(int stage) const {
    return base + Tr::kOffsets.dout + stage * Tr::kQBytes;
  }
  __device__ uint32_t ds(int buffer) const {
    return base + Tr::kOffsets.ds + buffer * static_cast<uint32_t>(kBwdDsBytes);
  }
  /// Consumer `c`'s dQ staging boxes (kBwdDqBoxBytes each, 512-byte aligned for the swizzle).
  __device__ uint32_t dq_stage(int c) const {
    return base + Tr::kOffsets.dq_stage +
           c * static_cast<uint32_t>(Tr::kDqBoxes * kBwdDqBoxBytes);
  }
  /// Row values of slot `stage`: kBwdBlockM LSE values (log2 units), then as many D.
  __device__ const float* rows(int stage) const {
    return reinterpret_cast<const float*>(generic + Tr::kOffsets.rows) +
           stage * kBwdRowBufferFloats;
  }
  __device__ uint32_t rows_addr(int stage) const {
    return base + static_cast<uint32_t>(Tr::kOffsets.rows + stage * kBwdRowBufferFloats * 4);
  }
  __device__ uint32_t kv_full() const { return base + Tr::kOffsets.barriers; }
  __device__ uint32_t q_full(int stage) const { return kv_full() + 8 * (1 + stage); }
  __device__ uint32_t q_empty(int stage) const { return kv_full() + 8 * (1 + kBwdStages + stage); }
};

/// The key block of a CTA and the query blocks it walks.
struct KeyBlockWork {
  int n0, head_kv, seq;
  SeqRange rows;
  int m_first;  ///< first query block that sees a key of the block (causal), else 0
  int m_count;  ///< query blocks per query head of the group
  int steps;    ///< m_count x group

  __device__ int head(int step, int group) const { return head_kv * group + step / m_count; }
  __device__ int m0(int step) const { return (m_first + step % m_count) * kBwdBlockM; }
};

__device__ __forceinline__ KeyBlockWork locate_key_block(const sm80::BwdParams& p, int tile) {
  const sm80::ShapeParams& s = p.shape;
  KeyBlockWork w;
  const int bh = tile / p.num_n_blocks;
  w.n0 = (tile % p.num_n_blocks) * kBwdBlockN;
  w.head_kv = bh % s.heads_kv;
  w.seq = bh / s.heads_kv;
  w.rows = seq_range(s, w.seq);
  // Query rows that see key n0 under the (bottom-right) causal mask start at n0 - (Nk - Nq).
  const int first_row = s.causal ? max(0, w.n0 - (w.rows.k_len - w.rows.q_len)) : 0;
  w.m_first = first_row / kBwdBlockM;
  w.m_count = max(0, (w.rows.q_len + kBwdBlockM - 1) / kBwdBlockM - w.m_first);
  w.steps = w.m_count * s.group;
  return w;
}

/// TMA loads of one kRows-row tile, one box per column panel, all completing on `bar`.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void load_panels(uint32_t dst, const CUtensorMap* map, int64_t row,
                                            int head, int seq_coord, uint32_t bar) {
  using Tr = BwdTraits<kHeadDim>;
#pragma unroll
  for (int panel = 0; panel < Tr::kPanels; ++panel) {
    tma_load_4d(dst + panel * kRows * Tr::kSwizzle, map, panel * Tr::kPanelCols,
                static_cast<int>(row), head, seq_coord, bar);
  }
}

/// The producer's TMA thread: K and V once, then Q and dO of every step into the ring.
template <int kHeadDim>
__device__ __forceinline__ void produce_tiles(const BwdParams& p, const BwdSmem<kHeadDim>& sm,
                                              const KeyBlockWork& w) {
  using Tr = BwdTraits<kHeadDim>;
  const sm80::ShapeParams& s = p.base.shape;
  const int seq_coord = s.cu_seqlens_q == nullptr ? w.seq : 0;
  mbarrier_arrive_expect_tx(sm.kv_full(), 2 * Tr::kKvBytes);
  load_panels<kHeadDim, kBwdBlockN>(sm.k(), &p.tmap_k, w.rows.k_begin + w.n0, w.head_kv, seq_coord,
                                    sm.kv_full());
  load_panels<kHeadDim, kBwdBlockN>(sm.v(), &p.tmap_v, w.rows.k_begin + w.n0, w.head_kv, seq_coord,
                                    sm.kv_full());
  for (int step = 0; step < w.steps; ++step) {
    const int stage = step % kBwdStages;
    mbarrier_wait(sm.q_empty(stage), ((step / kBwdStages) & 1) ^ 1);
    mbarrier_arrive_expect_tx(sm.q_full(stage), 2 * Tr::kQBytes);
    const int64_t row = w.rows.q_begin + w.m0(step);
    const int head = w.head(step, s.group);
    load_panels<kHeadDim, kBwdBlockM>(sm.q(stage), &p.tmap_q, row, head, seq_coord,
                                      sm.q_full(stage));
    load_panels<kHeadDim, kBwdBlockM>(sm.dout(stage), &p.tmap_dout, row, head, seq_coord,
                                      sm.q_full(stage));
  }
}

/// The producer's second warp: LSE (log2 units) and D of every step's rows by cp.async, zero past
/// the sequence (the consumers mask those queries), each lane arriving on the slot's full barrier
/// once its copies have landed. Asynchronous copies keep the consumers' reads ordered by the
/// mbarrier alone (and visible as such to compute-sanitizer's racecheck).
template <int kHeadDim>
__device__ __forceinline__ void produce_row_values(const BwdParams& p, const BwdSmem<kHeadDim>& sm,
                                                   const KeyBlockWork& w, int lane) {
  const sm80::BwdParams& b = p.base;
  for (int step = 0; step < w.steps; ++step) {
    const int stage = step % kBwdStages;
    mbarrier_wait(sm.q_empty(stage), ((step / kBwdStages) & 1) ^ 1);
    const int m0 = w.m0(step);
    const int64_t first = w.head(step, b.shape.group) * b.accum_rows + w.rows.q_ws_row + m0;
#pragma unroll
    for (int i = lane; i < kBwdRowBufferFloats; i += 32) {
      const int row = i % kBwdBlockM;
      const bool valid = m0 + row < w.rows.q_len;
      const float* values = i < kBwdBlockM ? b.lse_log2 : b.dvec;
      ptx::cp_async_4(sm.rows_addr(stage) + 4 * i, valid ? values + first + row : values, valid);
    }
    cp_async_mbarrier_arrive_noinc(sm.q_full(stage));
  }
}

/// S^T (or dP^T) = A B^T for one consumer's 64 keys: A = its rows of K (or V), B = the Q (or dO)
/// block, both K-major, one wgmma per 16 columns of D.
template <typename T, int kHeadDim>
__device__ __forceinline__ void gemm_keys_by_queries(float (&acc)[kBwdBlockM / 2], uint32_t a_rows,
                                                     uint32_t b_tile) {
  using Tr = BwdTraits<kHeadDim>;
  constexpr uint32_t kGroupBytes = 8 * Tr::kSwizzle;
  const uint64_t a_base = smem_descriptor(a_rows, 16, kGroupBytes, Tr::kSwizzleMode);
  const uint64_t b_base = smem_descriptor(b_tile, 16, kGroupBytes, Tr::kSwizzleMode);
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const int col = kk * 16;
    const uint32_t within = (col % Tr::kPanelCols) * 2;
    const uint32_t panel = col / Tr::kPanelCols;
    const uint64_t desc_a =
        advance_descriptor(a_base, panel * kBwdBlockN * Tr::kSwizzle + within);
    const uint64_t desc_b =
        advance_descriptor(b_base, panel * kBwdBlockM * Tr::kSwizzle + within);
    wgmma_ss<T, kBwdBlockM>(acc, desc_a, desc_b, kk > 0 ? 1u : 0u);
  }
}

/// acc += A B with A = P^T or dS^T from registers (k16 slices over the block's queries) and B the
/// dO or Q block, MN-major: its leading byte offset steps between column panels, its stride byte
/// offset between 8-row groups.
template <typename T, int kHeadDim>
__device__ __forceinline__ void gemm_keys_by_dims(float (&acc)[kHeadDim / 2],
                                                  const uint32_t (&frag)[kBwdBlockM / 16][4],
                                                  uint32_t b_tile) {
  using Tr = BwdTraits<kHeadDim>;
  const uint64_t b_base =
      smem_descriptor(b_tile, kBwdBlockM * Tr::kSwizzle, 8 * Tr::kSwizzle, Tr::kSwizzleMode);
#pragma unroll
  for (int j = 0; j < kBwdBlockM / 16; ++j) {
    const uint64_t desc_b = advance_descriptor(b_base, j * 16 * Tr::kSwizzle);
    wgmma_rs_mn<T, kHeadDim>(acc, frag[j], desc_b, 1u);
  }
}

/// A consumer's columns of dQ = dS K: A = the dS tile of both consumers ([query][key], 128-byte
/// swizzled panels of 64 keys), B = this consumer's panels of K from `k_panel` on (MN-major,
/// kDqCols columns: the leading byte offset steps between panels).
template <typename T, int kHeadDim>
__device__ __forceinline__ void gemm_dq(float (&acc)[BwdTraits<kHeadDim>::kDqCols / 2],
                                        uint32_t ds_tile, uint32_t k_panel) {
  using Tr = BwdTraits<kHeadDim>;
  const uint64_t a_base = smem_descriptor(ds_tile, 16, 8 * 128, 1);
  const uint64_t b_base =
      smem_descriptor(k_panel, kBwdBlockN * Tr::kSwizzle, 8 * Tr::kSwizzle, Tr::kSwizzleMode);
#pragma unroll
  for (int kk = 0; kk < kBwdBlockN / 16; ++kk) {
    const int key = kk * 16;
    const uint64_t desc_a =
        advance_descriptor(a_base, (key / 64) * kBwdBlockM * 128 + (key % 64) * 2);
    const uint64_t desc_b = advance_descriptor(b_base, kk * 16 * Tr::kSwizzle);
    wgmma_ss_mn<T, Tr::kDqCols>(acc, desc_a, desc_b, kk > 0 ? 1u : 0u);
  }
}

/// A consumer warpgroup: its 64 keys against every query block of the CTA.
template <typename T, int kHeadDim>
struct BwdConsumer {
  using Tr = BwdTraits<kHeadDim>;
  static constexpr int kQTiles = kBwdBlockM / 8;

  const BwdParams& p;
  const BwdSmem<kHeadDim>& sm;
  const KeyBlockWork& w;
  int consumer, warp, lane;

  float acc_dk[1][kHeadDim / 8][4];
  float acc_dv[1][kHeadDim / 8][4];

  template <int kCount>
  __device__ static float (&flat(float (&acc)[1][kCount][4]))[kCount * 4] {
    return reinterpret_cast<float(&)[kCount * 4]>(acc);
  }

  /// Keys this thread's accumulator rows hold (within the sequence), for half 0 and 1.
  __device__ int key(int half) const {
    return w.n0 + consumer * 64 + warp * 16 + lane / 4 + half * 8;
  }

  /// S^T becomes P^T = exp2(S^T scale log2(e) - LSE); keys past the sequence or the causal limit
  /// and queries past the sequence get 0 (and so dS^T = 0 there too).
  __device__ void probabilities(float (&s)[1][kQTiles][4], const float* rows, int m0) const {
    const sm80::ShapeParams& sh = p.base.shape;
    const SeqRange& r = w.rows;
    const bool needs_mask = w.n0 + kBwdBlockN > r.k_len || m0 + kBwdBlockM > r.q_len ||
                            (sh.causal && w.n0 + kBwdBlockN - 1 > m0 + r.k_len - r.q_len);
    const float* lse = rows;
#pragma unroll
    for (int j = 0; j < kQTiles; ++j) {
      const int col = j * 8 + 2 * (lane % 4);
      const float2 lse2 = *reinterpret_cast<const float2*>(lse + col);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int half = i / 2, e = i % 2;
        float pr = ptx::exp2_approx(fmaf(s[0][j][i], sh.scale_log2, e ? -lse2.y : -lse2.x));
        if (needs_mask) {
          const int query = m0 + col + e;
          const int limit = sh.causal ? min(query + 1 + r.k_len - r.q_len, r.k_len) : r.k_len;
          if (key(half) >= limit || query >= r.q_len) pr = 0.0f;
        }
        s[0][j][i] = pr;
      }
    }
  }

  /// dP^T becomes dS^T = P^T (dP^T - D).
  __device__ void ds_from_dp(const float (&s)[1][kQTiles][4], float (&dp)[1][kQTiles][4],
                             const float* rows) const {
    const float* dvec = rows + kBwdBlockM;
#pragma unroll
    for (int j = 0; j < kQTiles; ++j) {
      const float2 d2 = *reinterpret_cast<const float2*>(dvec + j * 8 + 2 * (lane % 4));
#pragma unroll
      for (int i = 0; i < 4; ++i) dp[0][j][i] = s[0][j][i] * (dp[0][j][i] - (i % 2 ? d2.y : d2.x));
    }
  }

  /// dS^T (A fragments) into dS buffer `ds_tile` as [query][key]: stmatrix transposes each 8x8
  /// matrix; rows of 128 bytes hold this consumer's 64 keys, 16-byte chunks XOR-swizzled by row.
  __device__ void store_ds(const uint32_t (&frag)[kBwdBlockM / 16][4], uint32_t ds_tile) const {
    const int matrix = lane / 8;
    const uint32_t panel = ds_tile + consumer * kBwdBlockM * 128;
    const int chunk = 2 * warp + matrix % 2;
#pragma unroll
    for (int j = 0; j < kBwdBlockM / 16; ++j) {
      const int query = j * 16 + 8 * (matrix / 2) + lane % 8;
      stmatrix_x4_trans(panel + query * 128 + ((chunk ^ (query % 8)) * 16), frag[j][0], frag[j][1],
                        frag[j][2], frag[j][3]);
    }
  }

  /// Adds this consumer's dQ columns of a query block into the fp32 workspace; consumer 1 leaves
  /// out the columns that consumer 0 also computed.
  __device__ void add_dq(const float (&acc)[1][Tr::kDqCols / 8][4], int head, int m0) const {
    if constexpr (Tr::kTile.staged_dq) {
      add_dq_staged(acc, head, m0);
    } else {
      add_dq_atomic(acc, head, m0);
    }
  }

  /// add_dq with float2 atomics from every thread, for the valid rows (tiles without staged_dq).
  __device__ void add_dq_atomic(const float (&acc)[1][Tr::kDqCols / 8][4], int head, int m0) const {
    const sm80::BwdParams& b = p.base;
    const int head_dim = b.shape.head_dim;
    const int col0 = consumer * Tr::kDqPanelStep * Tr::kPanelCols;
    const int first_col = consumer * Tr::kSharedDqCols;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp * 16 + lane / 4 + half * 8;
      if (m0 + row >= w.rows.q_len) continue;
      float* dst =
          b.dq_accum + (head * b.accum_rows + w.rows.q_ws_row + m0 + row) * head_dim + col0;
#pragma unroll
      for (int n = 0; n < Tr::kDqCols / 8; ++n) {
        const int col = n * 8 + 2 * (lane % 4);
        if (col >= first_col && col0 + col < head_dim) {
          atomicAdd(reinterpret_cast<float2*>(dst + col),
                    make_float2(acc[0][n][2 * half], acc[0][n][2 * half + 1]));
        }
      }
    }
  }

  /// add_dq through shared staging (tiles with staged_dq): every thread puts its values into the
  /// consumer's staging boxes (16 columns by 64 rows, 64-byte swizzle: the 16-byte chunk c of row r
  /// lies at chunk c ^ (r / 2 % 4)), rows past the sequence as zeros, since a box also covers them
  /// (the next sequence's rows, or none past the workspace); then one thread adds the boxes with
  /// TMA reduce-adds; boxes past the head dim are left out (the map clips the rest). The atomics
  /// held a third of a D = 128 step's stall samples (Nsight Compute, session 15), also with their
  /// addresses made cheap. The staging is written again only after this consumer's pair barrier of
  /// the next step, before which the issuing thread waits for the reduce-adds to have read it
  /// (gradients).
  __device__ void add_dq_staged(const float (&acc)[1][Tr::kDqCols / 8][4], int head, int m0) const {
    const uint32_t stage = sm.dq_stage(consumer);
    const bool partial = m0 + kBwdBlockM > w.rows.q_len;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp * 16 + lane / 4 + half * 8;
      const bool valid = !partial || m0 + row < w.rows.q_len;
      const uint32_t row_addr = stage + row * kBwdDqBoxCols * 4;
      const int swizzle = (row >> 1) & 3;
#pragma unroll
      for (int n = 0; n < Tr::kDqCols / 8; ++n) {
        const int chunk = 2 * (n % 2) + (lane % 4) / 2;
        const uint32_t addr = row_addr + static_cast<uint32_t>((n / 2) * kBwdDqBoxBytes) +
                              ((chunk ^ swizzle) * 16) + (lane % 2) * 8;
        st_shared_v2(addr, valid ? acc[0][n][2 * half] : 0.0f,
                     valid ? acc[0][n][2 * half + 1] : 0.0f);
      }
    }
    fence_proxy_async_shared();
    named_barrier_sync(2 + consumer, 128);  // this consumer's boxes are in
    if (warp == 0 && lane == 0) {
      const int head_dim = p.base.shape.head_dim;
      const int col0 = consumer * Tr::kDqPanelStep * Tr::kPanelCols;
      const int first_col = consumer * Tr::kSharedDqCols;
      const int row0 = static_cast<int>(w.rows.q_ws_row) + m0;
#pragma unroll
      for (int box = 0; box < Tr::kDqBoxes; ++box) {
        const int col = box * kBwdDqBoxCols;
        if (col >= first_col && col0 + col < head_dim) {
          tma_reduce_add_3d(&p.tmap_dq_accum, stage + static_cast<uint32_t>(box * kBwdDqBoxBytes),
                            col0 + col, row0, head);
        }
      }
      bulk_commit_group();
    }
  }

  using ScoreAcc = float[1][kQTiles][4];
  using DqAcc = float[1][Tr::kDqCols / 8][4];

  /// Issues S^T = K Q^T and dP^T = V dO^T of step `index` (two wgmma groups) once its slot is full.
  __device__ void issue_scores(int index, ScoreAcc& acc_s, ScoreAcc& acc_dp) const {
    const int stage = index % kBwdStages;
    mbarrier_wait(sm.q_full(stage), (index / kBwdStages) & 1);
    wgmma_fence();
    gemm_keys_by_queries<T, kHeadDim>(flat(acc_s), sm.k() + consumer * 64 * Tr::kSwizzle,
                                      sm.q(stage));
    wgmma_commit();
    gemm_keys_by_queries<T, kHeadDim>(flat(acc_dp), sm.v() + consumer * 64 * Tr::kSwizzle,
                                      sm.dout(stage));
    wgmma_commit();
  }

  /// S^T of step `index` becomes P^T while its dP^T may still run; returns once dP^T is done.
  __device__ void probabilities_of(int index, ScoreAcc& acc_s, ScoreAcc& acc_dp) const {
    wgmma_wait<1>();
    fence_registers(flat(acc_s));
    probabilities(acc_s, sm.rows(index % kBwdStages), w.m0(index));
    wgmma_wait<0>();
    fence_registers(flat(acc_dp));
  }

  /// The rest of step `index` after probabilities_of, short of adding dQ: dS^T, its exchange
  /// between the consumers, dV, dK and this consumer's dQ columns (left in `acc_dq`, every wgmma
  /// issued so far complete); then the slot goes back to the producer.
  __device__ void gradients(int index, ScoreAcc& acc_s, ScoreAcc& acc_dp, DqAcc& acc_dq) {
    const int stage = index % kBwdStages;
    ds_from_dp(acc_s, acc_dp, sm.rows(stage));

    uint32_t p_frag[1][kBwdBlockM / 16][4], ds_frag[1][kBwdBlockM / 16][4];
    acc_to_a_frags<T>(p_frag, acc_s);
    acc_to_a_frags<T>(ds_frag, acc_dp);
    const uint32_t ds_tile = sm.ds(index & 1);
    store_ds(ds_frag[0], ds_tile);
    fence_proxy_async_shared();
    // The last step's dQ reduce-adds have read this consumer's staging (add_dq) once the
    // barrier is passed.
    if (Tr::kTile.staged_dq && warp == 0 && lane == 0) bulk_wait_group_read<0>();
    named_barrier_sync(1, kBwdConsumers * 128);  // both consumers' dS are in

    fence_registers(flat(acc_dv));
    fence_registers(flat(acc_dk));
    wgmma_fence();
    gemm_keys_by_dims<T, kHeadDim>(flat(acc_dv), p_frag[0], sm.dout(stage));
    gemm_keys_by_dims<T, kHeadDim>(flat(acc_dk), ds_frag[0], sm.q(stage));
    wgmma_commit();
    gemm_dq<T, kHeadDim>(flat(acc_dq), ds_tile,
                         sm.k() + consumer * Tr::kDqPanelStep * kBwdBlockN * Tr::kSwizzle);
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(flat(acc_dv));
    fence_registers(flat(acc_dk));
    fence_registers(flat(acc_dq));
    // Every thread arrives: its own LSE and D reads of the slot are then ordered before the
    // producer's next copies into it (one arrival per warp would not order the other lanes').
    mbarrier_arrive(sm.q_empty(stage));
  }

  /// Adds step `index`'s dQ columns, computed by gradients.
  __device__ void add_dq_of(int index, const DqAcc& acc_dq) const {
    add_dq(acc_dq, w.head(index, p.base.shape.group), w.m0(index));
  }

  /// Every step of the walk. Where registers allow (Tr::kScoresAhead), the next step's S^T and
  /// dP^T go to the tensor cores before this step's dQ adds, so that those hide behind them.
  /// Each iteration waits for the wgmma it issued (an accumulator in flight across the loop's back
  /// edge makes ptxas serialize the wgmma: C7514), and the last step is peeled off rather than
  /// guarded (a branch around a wgmma serializes them all: C7520).
  __device__ void walk() {
    ScoreAcc acc_s, acc_dp;
    DqAcc acc_dq;
    if constexpr (Tr::kScoresAhead) {
      issue_scores(0, acc_s, acc_dp);
      probabilities_of(0, acc_s, acc_dp);
      for (int index = 0; index + 1 < w.steps; ++index) {
        gradients(index, acc_s, acc_dp, acc_dq);
        issue_scores(index + 1, acc_s, acc_dp);
        add_dq_of(index, acc_dq);
        probabilities_of(index + 1, acc_s, acc_dp);
      }
      gradients(w.steps - 1, acc_s, acc_dp, acc_dq);
      add_dq_of(w.steps - 1, acc_dq);
    } else {
      for (int index = 0; index < w.steps; ++index) {
        issue_scores(index, acc_s, acc_dp);
        probabilities_of(index, acc_s, acc_dp);
        gradients(index, acc_s, acc_dp, acc_dq);
        add_dq_of(index, acc_dq);
      }
    }
  }

  __device__ void run() {
    clear(acc_dk);
    clear(acc_dv);
    if (w.steps > 0) {
      mbarrier_wait(sm.kv_full(), 0);
      walk();
      // The staging must stay until the reduce-adds have read it: the CTA's exit ends it. Their
      // writes need no wait (the grid completes with them).
      if (Tr::kTile.staged_dq && warp == 0 && lane == 0) bulk_wait_group_read<0>();
    }
    const sm80::BwdParams& b = p.base;
    const int keys_valid = min(kBwdBlockN, w.rows.k_len - w.n0);
    const int key0 = consumer * 64 + warp * 16;
    sm80::store_kv_grad<T, 1, kHeadDim / 8>(b.dk, acc_dk, b.shape.scale, w.seq,
                                            w.rows.k_begin + w.n0, w.head_kv, key0, 0, keys_valid,
                                            b.shape.head_dim, lane);
    sm80::store_kv_grad<T, 1, kHeadDim / 8>(b.dv, acc_dv, 1.0f, w.seq, w.rows.k_begin + w.n0,
                                            w.head_kv, key0, 0, keys_valid, b.shape.head_dim, lane);
  }
};

template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kBwdThreads, 1) bwd_kernel(const __grid_constant__ BwdParams p) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  const BwdSmem<kHeadDim> sm{base, smem_raw + (base - raw)};
  const KeyBlockWork w = locate_key_block(p.base, static_cast<int>(blockIdx.x));
  // Key blocks past a (varlen) sequence's end own no dK, dV rows.
  if (w.n0 >= w.rows.k_len) return;
  if (threadIdx.x == 0) {
    mbarrier_init(sm.kv_full(), 1);
    for (int stage = 0; stage < kBwdStages; ++stage) {
      mbarrier_init(sm.q_full(stage), 1 + 32);  // the TMA thread and the row-value warp's lanes
      mbarrier_init(sm.q_empty(stage), kBwdConsumers * 128);
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    set_max_registers<kBwdProducerRegisters, false>();
    if (threadIdx.x == 0 && w.steps > 0) {
      prefetch_tensor_map(&p.tmap_q);
      prefetch_tensor_map(&p.tmap_k);
      prefetch_tensor_map(&p.tmap_v);
      prefetch_tensor_map(&p.tmap_dout);
      if (BwdTraits<kHeadDim>::kTile.staged_dq) prefetch_tensor_map(&p.tmap_dq_accum);
      produce_tiles<kHeadDim>(p, sm, w);
    } else if (threadIdx.x / 32 == 1) {
      produce_row_values<kHeadDim>(p, sm, w, static_cast<int>(threadIdx.x) % 32);
    }
  } else {
    set_max_registers<kBwdConsumerRegisters, true>();
    BwdConsumer<T, kHeadDim> c{p,
                               sm,
                               w,
                               warpgroup - 1,
                               (static_cast<int>(threadIdx.x) / 32) % 4,
                               static_cast<int>(threadIdx.x) % 32};
    c.run();
  }
}

template <DType kDType, int kHeadDim>
void run_bwd(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  constexpr int kSmem = static_cast<int>(bwd_smem_bytes(kHeadDim));
  auto* kernel = &bwd_kernel<T, kHeadDim>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm90 backward)");
  const long long blocks = static_cast<long long>(params.base.num_n_blocks) *
                           params.base.shape.batch * params.base.shape.heads_kv;
  kernel<<<static_cast<unsigned>(blocks), kBwdThreads, kSmem, static_cast<cudaStream_t>(stream)>>>(
      params);
  cuda_check(cudaGetLastError(), "the sm90 backward kernel launch");
}

}  // namespace flashvision::detail::sm90
