// A consumer warpgroup of the sm90 forward: 64 query rows of each tile against the key blocks of
// the ring. Within a warpgroup the softmax of block j overlaps the GEMMs that follow it: S' = Q K
// of block j+1 and O += P V of block j are issued together, S' is waited for first, and its
// softmax runs while P V is still on the tensor cores. On tiles of two warpgroups O's rescale by
// the softmax's correction runs between the two issues, while S' is on the tensor cores, so that
// only the conversion of P lies between the end of P V and the next issue (kRescaleDuringQk).
// Between the warpgroups a round of named barriers lets only one issue GEMMs at a time, so one's
// softmax hides behind the others' GEMMs. Where every tile is a single key block (short image
// sequences, cross-attention to a few text tokens) the same pipeline runs across tiles instead:
// S = Q K of the next tile is issued with O += P V of this one (run_cross_tile).
#pragma once

#include <cmath>

#include "cuda/common/online_softmax.cuh"
#include "cuda/common/ptx.cuh"
#include "cuda/common/score_mask.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/sm90/fwd_epilogue.cuh"
#include "cuda/sm90/fwd_query_scaler.cuh"
#include "cuda/sm90/fwd_timeline.cuh"
#include "cuda/sm90/fwd_traits.cuh"
#include "cuda/sm90/p_fragments.cuh"
#include "cuda/sm90/ptx_sm90.cuh"
#include "cuda/sm90/wgmma_ops.cuh"

namespace flashvision::detail::sm90 {

/// S = Q K^T for one warpgroup's 64 rows against the first kKeys keys of a K tile of kBlockN: both
/// operands K-major, one wgmma per 32 bytes of a row (16 columns of D in f16/bf16, 32 in e4m3).
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kKeys = kBlockN>
__device__ __forceinline__ void gemm_qk(float (&acc)[kKeys / 2], uint32_t q_rows, uint32_t k_tile) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  constexpr uint32_t kGroupBytes = 8 * Tr::kSwizzle;  // 8 rows of a panel: one swizzle atom
  constexpr int kStepBytes = 32;
  const uint64_t q_base = smem_descriptor(q_rows, 16, kGroupBytes, Tr::kSwizzleMode);
  const uint64_t k_base = smem_descriptor(k_tile, 16, kGroupBytes, Tr::kSwizzleMode);
#pragma unroll
  for (int kk = 0; kk < kHeadDim * Tr::kElementBytes / kStepBytes; ++kk) {
    const uint32_t within = (kk * kStepBytes) % Tr::kSwizzle;
    const uint32_t panel = (kk * kStepBytes) / Tr::kSwizzle;
    const uint64_t desc_q =
        advance_descriptor(q_base, panel * Tr::kBlockM * Tr::kSwizzle + within);
    const uint64_t desc_k =
        advance_descriptor(k_base, panel * Tr::kBlockN * Tr::kSwizzle + within);
    wgmma_ss<T, kKeys>(acc, desc_q, desc_k, kk > 0 ? 1u : 0u);
  }
}

/// O += P V: P from registers (one k-step of keys a fragment). 16-bit V is MN-major: its leading
/// byte offset steps between column panels, its stride byte offset between 8-key groups. FP8's V
/// is transposed ([D][keys], fp8 wgmma reads B only K-major): panels of D rows of kValuePanelKeys
/// keys, read as K is in S = Q K^T.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols>
__device__ __forceinline__ void gemm_pv(
    float (&acc)[FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>::kHeadDimV / 2],
    const uint32_t (&p_frag)[kBlockN / kPvStepKeys<T>][4], uint32_t v_tile) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  if constexpr (Tr::kFp8) {
    constexpr int kPanelKeys = Tr::kValuePanelKeys;
    const uint64_t v_base = smem_descriptor(v_tile, 16, 8 * kPanelKeys, Tr::kValueSwizzleMode);
#pragma unroll
    for (int j = 0; j < Tr::kBlockN / kPvStepKeys<T>; ++j) {
      const int key = j * kPvStepKeys<T>;
      const uint32_t offset = (key / kPanelKeys) * Tr::kHeadDimV * kPanelKeys + key % kPanelKeys;
      wgmma_rs<T, Tr::kHeadDimV>(acc, p_frag[j], advance_descriptor(v_base, offset), 1u);
    }
  } else {
    const uint64_t v_base =
        smem_descriptor(v_tile, Tr::kBlockN * Tr::kSwizzle, 8 * Tr::kSwizzle, Tr::kSwizzleMode);
#pragma unroll
    for (int j = 0; j < Tr::kBlockN / 16; ++j) {
      const uint64_t desc_v = advance_descriptor(v_base, j * 16 * Tr::kSwizzle);
      wgmma_rs_mn<T, Tr::kHeadDimV>(acc, p_frag[j], desc_v, 1u);
    }
  }
}

/// Turn-taking of the consumer warpgroups for issuing GEMMs, in a round (hardware barriers 1 to
/// kConsumers): a warpgroup issues once the one before it has passed the turn on, so one's softmax
/// hides behind the others' GEMMs. A half tile's one consumer always has the turn.
template <int kConsumers>
class TurnRound {
 public:
  __device__ explicit TurnRound(int consumer) : consumer_(consumer) {}
  /// The last warpgroup lets the first go first.
  __device__ void start() const {
    if (kConsumers > 1 && consumer_ == kConsumers - 1) arrive(0);
  }
  __device__ void wait_turn() const {
    if constexpr (kConsumers > 1) named_barrier_sync(1 + consumer_, 256);
  }
  __device__ void pass_turn() const {
    if constexpr (kConsumers > 1) arrive((consumer_ + 1) % kConsumers);
  }

 private:
  /// Each barrier counts its waiting warpgroup and the one arriving before it.
  __device__ static void arrive(int consumer) { named_barrier_arrive(1 + consumer, 256); }
  int consumer_;
};

/// Per-tile state of a consumer warpgroup and the steps of its loop; kCtas: the CTAs of the
/// cluster that share every K and V slot (1: none); kFirstKeys: the keys of a tile's first key
/// block (the sequence's last) that its S = Q K^T, mask and softmax take, fewer than kBlockN where
/// the host knows the rest lie past the sequence (FwdParams::narrow_first); its P V takes the whole
/// block, with zero probabilities past them.
template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          int kCtas, int kFirstKeys = kBlockN>
struct Consumer {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  using Softmax = typename Tr::Softmax;

  const FwdParams& p;
  const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>& smem;
  const TurnRound<Tr::kConsumers>& turns;
  int consumer, warp, lane;
  [[no_unique_address]] mutable FwdTimeline timeline;

  // Accumulators in the mma tile layout ([1][columns / 8][4]) so that the softmax, mask and
  // fragment conversion of the sm80 path apply; the wgmma wrappers see them as flat arrays.
  float acc_o[1][Tr::kHeadDimV / 8][4];
  float acc_s[1][kBlockN / 8][4];
  uint32_t p_frag[1][kBlockN / kPvStepKeys<T>][4];
  Softmax softmax;

  __device__ float (&o_flat())[Tr::kHeadDimV / 2] {
    return reinterpret_cast<float(&)[Tr::kHeadDimV / 2]>(acc_o);
  }
  __device__ float (&s_flat())[kBlockN / 2] {
    return reinterpret_cast<float(&)[kBlockN / 2]>(acc_s);
  }
  /// The probabilities of a block's first kKeys keys as P V's A fragments.
  template <int kKeys>
  __device__ uint32_t (&probabilities())[1][kKeys / kPvStepKeys<T>][4] {
    return reinterpret_cast<uint32_t(&)[1][kKeys / kPvStepKeys<T>][4]>(p_frag);
  }

  /// Masks scores `s` (kTiles x 8 keys) of the key block starting at n0 where tile w needs it
  /// (keys past the sequence, causal).
  template <int kTiles>
  __device__ void mask_block(float (&s)[1][kTiles][4], const WorkTile& w, int n0) {
    constexpr int kKeys = kTiles * 8;
    const int row0 = w.m0 + consumer * 64;
    const bool needs_mask = n0 + kKeys > w.rows.k_len ||
                            (p.shape.causal && n0 + kKeys - 1 > row0 + w.rows.k_len - w.rows.q_len);
    if (needs_mask) {
      mask_scores<Tr::kMaskSkipsSeenTiles>(s, row0 + warp * 16, n0, w.rows.q_len, w.rows.k_len,
                                           p.shape.causal, lane);
    }
  }

  /// Masks (where needed) and folds the scores of the key block starting at n0 into `state`, the
  /// softmax of tile w, leaving probabilities in acc_s; `correction` receives the factors O must
  /// still be multiplied by.
  __device__ void scores_to_probabilities(const WorkTile& w, int n0, float (&correction)[1][2],
                                          Softmax& state) {
    mask_block(acc_s, w, n0);
    state.update_scores(acc_s, p.shape.scale_log2, correction);
  }

  /// One work unit: its rows against its key blocks, then the epilogue (O and LSE of a whole
  /// tile, or the partial result of one key range of a split tile).
  __device__ void run(const WorkTile& w, RingPosition<Tr::kStages>& ring,
                      RingPosition<Tr::kQBuffers>& q_ring) {
    timeline.mark(TimelineEvent::kUnitStart);
    clear(acc_o);
    softmax.init();
    if (w.n_blocks > 0) run_blocks(w, ring, q_ring);
    finish(w);
    timeline.mark(TimelineEvent::kFinishDone);
  }

  /// The epilogue of unit w from O and the softmax: O and LSE of a whole tile, or the partial
  /// result of one key range of a split tile.
  __device__ void finish(const WorkTile& w) {
    float inv_sum[1][2], lse[1][2];
    softmax.finalize(p.shape.scale, inv_sum, lse);
    if constexpr (Tr::kFp8) {
      inv_sum[0][0] *= p.descale_v;
      inv_sum[0][1] *= p.descale_v;
    }
    if (w.partial >= 0) {
      store_partial<kBlockM, Tr::kHeadDimV>(p, w, consumer * 64 + warp * 16, acc_o, inv_sum, lse,
                                            lane);
      return;
    }
    store_output<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(
        p, w, w.m0 + consumer * 64 + warp * 16, acc_o, inv_sum, lse,
        smem.staging(consumer * 4 + warp), lane);
  }

  __device__ void run_blocks(const WorkTile& w, RingPosition<Tr::kStages>& ring,
                             RingPosition<Tr::kQBuffers>& q_ring) {
    const int q_buffer = wait_for_q(q_ring);
    const uint32_t q_rows = smem.q(q_buffer) + consumer * 64 * Tr::kSwizzle;

    // Prologue: S of the first block (the sequence's last) alone. A narrow one has accumulators
    // of its own: on acc_s's, a wgmma narrower than the loop's made ptxas serialize every wgmma of
    // the kernel (C7511).
    int stage = ring.stage();
    float correction[1][2];
    bool rescale_o;
    // Without a causal mask no row of the first block is empty (update_and_pack).
    const bool first_at_zero = p.q_prescaled != 0 && !p.shape.causal;
    if constexpr (kFirstKeys < kBlockN) {
      float first[1][kFirstKeys / 8][4];
      scores_alone(reinterpret_cast<float(&)[kFirstKeys / 2]>(first), q_rows, ring, w.n_blocks == 1,
                   q_buffer);
      mask_block(first, w, (w.n_block0 + w.n_blocks - 1) * kBlockN);
      rescale_o = softmax.template update_and_pack<T>(
          first, probabilities<kFirstKeys>(), p.shape.scale_log2, correction, first_at_zero);
      clear_probabilities_past<kFirstKeys>();
    } else {
      scores_alone(s_flat(), q_rows, ring, w.n_blocks == 1, q_buffer);
      mask_block(acc_s, w, (w.n_block0 + w.n_blocks - 1) * kBlockN);
      rescale_o = softmax.template update_and_pack<T>(acc_s, p_frag, p.shape.scale_log2, correction,
                                                      first_at_zero);
    }
    timeline.mark(TimelineEvent::kSoftmaxDone);

    for (int j = 1; j < w.n_blocks; ++j) {
      RingPosition<Tr::kStages> next{ring.index + 1};
      const int next_stage = next.stage();
      timeline.mark(TimelineEvent::kBlocksWait);
      mbarrier_wait(smem.k_full(next_stage), next.parity());
      mbarrier_wait(smem.v_full(stage), ring.parity());
      timeline.mark(TimelineEvent::kBlocksLanded);
      // The previous block's correction (the first block's leaves O at zero either way).
      // Q's descriptor derives from q_rows; opaque, it is made again each block rather than held
      // through the loop (the D = 64 wide tile spilled it).
      scores_with_values<Tr::kRescaleDuringQk>(opaque(q_rows), next_stage, stage, rescale_o,
                                               correction);
      if (j == w.n_blocks - 1) release(smem.q_empty(q_buffer));
      mask_block(acc_s, w, (w.n_block0 + w.n_blocks - 1 - j) * kBlockN);
      // P V of the previous block reads p_frag until it completes; ptxas placed this wait ahead
      // of the softmax in every kernel anyway (docs/hopper.md, "Overlap").
      wgmma_wait<0>();
      timeline.mark(TimelineEvent::kValuesDone);
      fence_registers(o_flat());
      release_kv(smem.v_empty(stage));
      rescale_o =
          softmax.template update_and_pack<T>(acc_s, p_frag, p.shape.scale_log2, correction);
      if constexpr (!Tr::kRescaleDuringQk) {
        if (rescale_o) Softmax::rescale(acc_o, correction);
      }
      timeline.mark(TimelineEvent::kSoftmaxDone);
      ring = next;
      stage = next_stage;
    }

    // Epilogue GEMM: P V of the last block.
    mbarrier_wait(smem.v_full(stage), ring.parity());
    if constexpr (Tr::kRescaleDuringQk) {
      if (rescale_o) Softmax::rescale(acc_o, correction);
    }
    values_alone(ring);
  }

  /// Zeroes the probabilities of the keys from kKeys on, which a narrow first block's softmax
  /// leaves as they were, so that its P V, over the whole block, adds nothing for them (V's rows
  /// past a dense sequence arrive as zeros). A P V of kKeys alone, in the loop's first step, made
  /// ptxas serialize the kernel's wgmma (C7511) wherever it was placed.
  template <int kKeys>
  __device__ void clear_probabilities_past() {
#pragma unroll
    for (int j = kKeys / kPvStepKeys<T>; j < kBlockN / kPvStepKeys<T>; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) p_frag[0][j][r] = 0u;
    }
  }

  /// Waits for the Q buffer at q_ring's position to land, scales this warpgroup's rows of it where
  /// the kernel scales Q, and moves q_ring on; returns the buffer.
  __device__ int wait_for_q(RingPosition<Tr::kQBuffers>& q_ring) const {
    const int buffer = q_ring.stage();
    timeline.mark(TimelineEvent::kQWait);
    mbarrier_wait(smem.q_full(buffer), q_ring.parity());
    timeline.mark(TimelineEvent::kQLanded);
    if constexpr (!Tr::kFp8) {
      if (p.q_prescaled) {
        scale_query_rows<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(
            smem.q(buffer), p.q_scale, consumer, warp * 32 + lane);
      }
    }
    ++q_ring.index;
    timeline.mark(TimelineEvent::kQScaled);
    return buffer;
  }

  /// S = Q K of the key block at the ring's position alone into `s` (its first 2 x kHalfKeys keys),
  /// once its K has landed, waited for; K released, and Q's buffer `q_buffer` where the block is
  /// the tile's last.
  template <int kHalfKeys>
  __device__ void scores_alone(float (&s)[kHalfKeys], uint32_t q_rows,
                               const RingPosition<Tr::kStages>& ring, bool last_of_q,
                               int q_buffer) {
    const int stage = ring.stage();
    mbarrier_wait(smem.k_full(stage), ring.parity());
    timeline.mark(TimelineEvent::kTurnWait);
    turns.wait_turn();
    timeline.mark(TimelineEvent::kTurnHeld);
    fence_registers(s);
    wgmma_fence();
    gemm_qk<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, 2 * kHalfKeys>(s, q_rows,
                                                                                  smem.k(stage));
    wgmma_commit();
    turns.pass_turn();
    timeline.mark(TimelineEvent::kTurnPassed);
    wgmma_wait<0>();
    timeline.mark(TimelineEvent::kScoresReady);
    fence_registers(s);
    release_kv(smem.k_empty(stage));
    if (last_of_q) release(smem.q_empty(q_buffer));
  }

  /// S' = Q K of the block in `next_stage` issued with O += P V of the block in `stage`, in one
  /// turn, and S' waited for (P V may still run); next_stage's K released. kRescale: O is
  /// multiplied by `correction` between the two issues, while S' runs, where `rescale_o` says the
  /// factors are not all 1 (warp-uniform).
  template <bool kRescale>
  __device__ void scores_with_values(uint32_t q_rows, int next_stage, int stage, bool rescale_o,
                                     const float (&correction)[1][2]) {
    timeline.mark(TimelineEvent::kTurnWait);
    turns.wait_turn();
    timeline.mark(TimelineEvent::kTurnHeld);
    fence_registers(s_flat());
    fence_registers(o_flat());
    wgmma_fence();
    gemm_qk<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(s_flat(), q_rows,
                                                                   smem.k(next_stage));
    wgmma_commit();
    if constexpr (kRescale) {
      if (rescale_o) Softmax::rescale(acc_o, correction);
      fence_registers(o_flat());
      wgmma_fence();  // P V reads the rescaled accumulators
    }
    gemm_pv<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(o_flat(), p_frag[0],
                                                                   smem.v(stage));
    wgmma_commit();
    turns.pass_turn();
    timeline.mark(TimelineEvent::kTurnPassed);
    wgmma_wait<1>();  // S' is ready; P V may still run
    timeline.mark(TimelineEvent::kScoresReady);
    fence_registers(s_flat());
    release_kv(smem.k_empty(next_stage));
  }

  /// O += P V of the block at the ring's position alone (its V has landed), waited for; V
  /// released and the ring moved on.
  __device__ void values_alone(RingPosition<Tr::kStages>& ring) {
    const int stage = ring.stage();
    timeline.mark(TimelineEvent::kTurnWait);
    turns.wait_turn();
    timeline.mark(TimelineEvent::kTurnHeld);
    fence_registers(o_flat());
    wgmma_fence();
    gemm_pv<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(o_flat(), p_frag[0],
                                                                   smem.v(stage));
    wgmma_commit();
    turns.pass_turn();
    timeline.mark(TimelineEvent::kTurnPassed);
    wgmma_wait<0>();
    timeline.mark(TimelineEvent::kValuesDone);
    fence_registers(o_flat());
    release_kv(smem.v_empty(stage));
    ++ring.index;
  }

  /// The CTA's units when each is a whole tile of one key block (FwdParams::cross_tile): the
  /// pipeline of run_blocks across tiles. S = Q K of the next tile is issued with O += P V of
  /// this one, the next tile's softmax runs while P V is on the tensor cores, and this tile's
  /// epilogue while the other warpgroups issue theirs. Tile by tile (run), a one-block tile runs
  /// its GEMM, softmax, GEMM and epilogue in sequence, and the warpgroups, a GEMM apart, reach
  /// their softmax together, when the tensor cores have nothing to run. Two softmax states: the
  /// tile whose P V is in flight and the next one's.
  __device__ void run_cross_tile(RingPosition<Tr::kStages>& ring,
                                 RingPosition<Tr::kQBuffers>& q_ring) {
    const uint32_t q_offset = consumer * 64 * Tr::kSwizzle;
    const int stride = static_cast<int>(gridDim.x);
    int unit = static_cast<int>(blockIdx.x);
    WorkTile w = locate_work<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(p, unit);
    float correction[1][2];  // of a first block: O is zero, nothing to rescale

    // Prologue: S of the CTA's first tile alone.
    softmax.init();
    int stage = ring.stage();
    const int first_q = wait_for_q(q_ring);
    scores_alone(s_flat(), smem.q(first_q) + q_offset, ring, true, first_q);
    scores_to_probabilities(w, 0, correction, softmax);
    pack_probabilities<T>(p_frag, acc_s);

    Softmax next_softmax;
    for (unit += stride; unit < p.num_units; unit += stride) {
      const WorkTile next_w =
          locate_work<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(p, unit);
      RingPosition<Tr::kStages> next{ring.index + 1};
      const int next_stage = next.stage();
      const int q_buffer = wait_for_q(q_ring);
      mbarrier_wait(smem.k_full(next_stage), next.parity());
      mbarrier_wait(smem.v_full(stage), ring.parity());
      clear(acc_o);
      scores_with_values<false>(smem.q(q_buffer) + q_offset, next_stage, stage, false, correction);
      release(smem.q_empty(q_buffer));
      next_softmax.init();
      scores_to_probabilities(next_w, 0, correction, next_softmax);
      wgmma_wait<0>();
      fence_registers(o_flat());
      release_kv(smem.v_empty(stage));
      finish(w);
      softmax = next_softmax;
      pack_probabilities<T>(p_frag, acc_s);
      w = next_w;
      ring = next;
      stage = next_stage;
    }

    // Epilogue: P V of the CTA's last tile.
    mbarrier_wait(smem.v_full(stage), ring.parity());
    clear(acc_o);
    values_alone(ring);
    finish(w);
  }

  /// One arrival per warp once its wgmma have read the slot (the barriers count its CTA's
  /// consumer warps).
  __device__ void release(uint32_t bar) const {
    if (lane == 0) mbarrier_arrive(bar);
  }

  /// Releases a K or V slot: one arrival per warp on the slot's empty barrier in every CTA that
  /// shares it (lane r on rank r's), since every CTA's producer writes into this CTA's slot.
  __device__ void release_kv(uint32_t bar) const {
    if constexpr (kCtas == 1) {
      release(bar);
    } else if (lane < kCtas) {
      mbarrier_arrive_cluster(cluster_address(bar, static_cast<uint32_t>(lane)));
    }
  }
};

template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kVInKernel, int kValueCols,
          bool kCrossTile, int kCtas, int kFirstKeys>
__device__ __forceinline__ void consume(
    const FwdParams& p,
    const SmemLayout<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>& smem, int consumer) {
  using Tr = FwdTraits<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>;
  const TurnRound<Tr::kConsumers> turns(consumer);
  turns.start();
  Consumer<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols, kCtas, kFirstKeys> c{
      p,
      smem,
      turns,
      consumer,
      (static_cast<int>(threadIdx.x) / 32) % 4,
      static_cast<int>(threadIdx.x) % 32,
      FwdTimeline(p, 1 + consumer)};
  RingPosition<Tr::kStages> ring;
  RingPosition<Tr::kQBuffers> q_ring;
  if constexpr (kCrossTile) {
    // The host launches one CTA per unit at most (grid_ctas), so every CTA has a first tile.
    c.run_cross_tile(ring, q_ring);
  } else {
    for (int unit = static_cast<int>(blockIdx.x); unit < p.num_units;
         unit += static_cast<int>(gridDim.x)) {
      const WorkTile w =
          locate_work<T, kHeadDim, kBlockM, kBlockN, kVInKernel, kValueCols>(p, unit);
      if (w.has_rows()) c.run(w, ring, q_ring);
    }
  }
}

}  // namespace flashvision::detail::sm90
