// The producer of the sm90 forward: one thread streams, for every tile of its CTA's share of the
// persistent schedule, Q once and K, V of each key block into the rings with TMA. It runs ahead
// of the consumers by as many slots as the rings have, also across tiles, so the next tile's
// loads overlap the current tile's GEMMs and its epilogue (its Q the whole tile, where the tile
// has two Q buffers). In clusters that share K and V (kCtas > 1), the producers of the cluster
// walk the same key blocks, and each loads its share of every block's rows into every CTA. In FP8
// V blocks go to staging slots instead, from which the producer warpgroup's other warps write
// the V stages transposed (fwd_value_transposer.cuh), or, where a pass before the kernel
// transposed V (FwdParams::fp8_values_transposed), straight into the V stages.
#pragma once

#include "cuda/sm90/fwd_timeline.cuh"
#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/ptx_sm90.cuh"

namespace flashvision::detail::sm90 {

/// Issues the TMA loads of one kRows-row tile, one box per column panel from column col0, all on
/// `bar`.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kRows, int kPanels>
__device__ __forceinline__ void load_tile(uint32_t dst, const CUtensorMap* map, int col0, int row,
                                          int head, int seq_coord, uint32_t bar) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
#pragma unroll
  for (int panel = 0; panel < kPanels; ++panel) {
    tma_load_4d(dst + panel * kRows * Tr::kSwizzle, map, col0 + panel * Tr::kPanelCols, row, head,
                seq_coord, bar);
  }
}

/// Issues the TMA loads of this CTA's share of the rows of a K or V block (kBlockN / kCtas rows
/// from `row`) into the same panels of every CTA of the cluster, all on `bar`.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kCtas, int kPanels>
__device__ __forceinline__ void load_shared_block(uint32_t dst, const CUtensorMap* map, int row,
                                                  int head, int seq_coord, uint32_t bar) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  constexpr int kShareRows = kBlockN / kCtas;
  const uint32_t rank = cluster_rank();
  const uint32_t share = dst + rank * kShareRows * Tr::kSwizzle;
#pragma unroll
  for (int panel = 0; panel < kPanels; ++panel) {
    tma_load_4d_multicast(share + panel * kBlockN * Tr::kSwizzle, map, panel * Tr::kPanelCols,
                          row + static_cast<int>(rank) * kShareRows, head, seq_coord, bar,
                          (1u << kCtas) - 1);
  }
}

/// A K or V block into the ring: loaded whole by this CTA, or (kCtas > 1) its share of the rows
/// into every CTA of the cluster, from column col0 (a value slice's first column; 0 in clusters).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kCtas, int kPanels>
__device__ __forceinline__ void load_key_block(uint32_t dst, const CUtensorMap* map, int col0,
                                               int row, int head, int seq_coord, uint32_t bar) {
  if constexpr (kCtas == 1) {
    load_tile<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kBlockN, kPanels>(
        dst, map, col0, row, head, seq_coord, bar);
  } else {
    load_shared_block<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCtas, kPanels>(
        dst, map, row, head, seq_coord, bar);
  }
}

/// FP8: a block of V as transpose_fp8_values wrote it (FwdParams::tmap_v over [sequence][head]
/// [panel][D][kValuePanelKeys]), a box a panel; `row`, the block's first key, is a multiple of
/// kBlockN and so of the panel's keys (the FP8 forward is dense: a sequence's keys start at row 0).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void load_transposed_values(uint32_t dst, const CUtensorMap* map,
                                                       int row, int head, int seq_coord,
                                                       uint32_t bar) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  constexpr int kPanelKeys = Tr::kValuePanelKeys;
#pragma unroll
  for (int panel = 0; panel < kBlockN / kPanelKeys; ++panel) {
    tma_load_5d(dst + panel * Tr::kHeadDimV * kPanelKeys, map, 0, 0, row / kPanelKeys + panel, head,
                seq_coord, bar);
  }
}

template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kCtas>
__device__ __forceinline__ void produce(
    const FwdParams& p,
    const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>& smem) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  RingPosition<Tr::kStages> ring;
  RingPosition<Tr::kQBuffers> q_ring;  // over the tiles whose Q was loaded
  RingPosition<kVInKernel ? Tr::kValueStagingSlots : 1> slots;  // over the V blocks staged
  FwdTimeline timeline(p, 0);
  for (int unit = static_cast<int>(blockIdx.x); unit < p.num_units;
       unit += static_cast<int>(gridDim.x)) {
    const WorkTile w = locate_work<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(p, unit);
    if (!w.has_loads()) continue;
    const int q_buffer = q_ring.stage();
    timeline.mark(TimelineEvent::kProducerQWait);
    mbarrier_wait(smem.q_empty(q_buffer), q_ring.parity() ^ 1);
    mbarrier_arrive_expect_tx(smem.q_full(q_buffer), Tr::kQBytes);
    load_tile<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, Tr::kBlockM, Tr::kPanels>(
        smem.q(q_buffer), &p.tmap_q, 0, static_cast<int>(w.rows.q_begin) + w.m0, w.head,
        w.seq_coord, smem.q_full(q_buffer));
    timeline.mark(TimelineEvent::kProducerQIssued);
    ++q_ring.index;
    for (int j = 0; j < w.n_blocks; ++j, ++ring.index) {
      const int stage = ring.stage();
      const uint32_t free_parity = ring.parity() ^ 1;
      const int key_row =
          static_cast<int>(w.rows.k_begin) + (w.n_block0 + w.n_blocks - 1 - j) * Tr::kBlockN;
      mbarrier_wait(smem.k_empty(stage), free_parity);
      mbarrier_arrive_expect_tx(smem.k_full(stage), Tr::kKBytes);
      load_key_block<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCtas, Tr::kPanels>(
          smem.k(stage), &p.tmap_k, 0, key_row, w.head_kv, w.seq_coord, smem.k_full(stage));
      timeline.mark(TimelineEvent::kProducerKIssued);
      if constexpr (kVInKernel) {
        // Into a staging slot, which the transposing warps write into the V stage.
        static_assert(kCtas == 1);
        const int slot = slots.stage();
        mbarrier_wait(smem.v_loaded_empty(slot), slots.parity() ^ 1);
        mbarrier_arrive_expect_tx(smem.v_loaded_full(slot), Tr::kVBytes);
        load_tile<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kBlockN, Tr::kPanelsV>(
            smem.v_loaded(slot), &p.tmap_v, w.v_col0, key_row, w.head_kv, w.seq_coord,
            smem.v_loaded_full(slot));
        ++slots.index;
      } else if constexpr (Tr::kFp8) {
        static_assert(kCtas == 1);
        mbarrier_wait(smem.v_empty(stage), free_parity);
        mbarrier_arrive_expect_tx(smem.v_full(stage), Tr::kVBytes);
        load_transposed_values<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(
            smem.v(stage), &p.tmap_v, key_row, w.head_kv, w.seq_coord, smem.v_full(stage));
      } else {
        mbarrier_wait(smem.v_empty(stage), free_parity);
        mbarrier_arrive_expect_tx(smem.v_full(stage), Tr::kVBytes);
        load_key_block<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCtas, Tr::kPanelsV>(
            smem.v(stage), &p.tmap_v, w.v_col0, key_row, w.head_kv, w.seq_coord,
            smem.v_full(stage));
        timeline.mark(TimelineEvent::kProducerVIssued);
      }
    }
  }
  if constexpr (kVInKernel) {
    // The next slot's arrival carries no block: the transposing warps find the loads ended.
    const int slot = slots.stage();
    mbarrier_wait(smem.v_loaded_empty(slot), slots.parity() ^ 1);
    st_shared_u32(smem.loads_ended(slot), 1u);
    mbarrier_arrive(smem.v_loaded_full(slot));
  }
}

}  // namespace flashvision::detail::sm90
