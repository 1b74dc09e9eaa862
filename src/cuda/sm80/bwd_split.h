// How many CTAs share one key block's query blocks in the sm80 backward. A pure host-side
// function of the launch geometry, kept apart from the CUDA code so that it can be unit-tested.
#pragma once

#include <algorithm>
#include <cstdint>

namespace flashvision::detail::sm80 {

/// Resident backward CTAs per SM: the kernel holds up to 255 registers x 256 threads, the whole
/// register file.
inline constexpr int kBwdCtasPerSm = 1;
/// Grids of at least this many waves are not split: their quantization loss is small, and a split
/// would add the partial dK/dV traffic.
inline constexpr int kBwdMaxWavesToSplit = 2;
/// Each split walks at least this many query blocks, so that loading its K/V block and writing
/// its partial dK/dV stay small next to its tensor-core work.
inline constexpr int64_t kBwdMinQueryBlocksPerSplit = 2;
inline constexpr int kBwdMaxSplits = 128;
/// Upper bound of the fp32 partial dK/dV workspace (deterministic grids, whose CTA count does not
/// grow with the key count, could otherwise ask for gigabytes).
inline constexpr int64_t kBwdPartialBudgetBytes = int64_t{256} << 20;

/// Query-block steps of the busiest SM when `ctas` CTAs each split their `query_blocks` blocks
/// `splits` ways over `slots` resident CTA slots: waves times the steps of one CTA.
constexpr int64_t bwd_split_cost(int64_t ctas, int64_t query_blocks, int64_t slots,
                                 int64_t splits) {
  return (ctas * splits + slots - 1) / slots * ((query_blocks + splits - 1) / splits);
}

/// Query splits for a backward grid of `ctas` CTAs (key blocks x kv heads x sequences, or kv
/// heads x sequences in deterministic mode) over `query_blocks` query blocks per sequence and
/// head, on `sm_count` SMs, when one split's partial dK and dV take `partial_bytes`: the split
/// count with the fewest steps on the busiest SM (the smallest among equals). 1 = no split.
constexpr int bwd_query_splits(int64_t ctas, int64_t query_blocks, int sm_count,
                               int64_t partial_bytes) {
  const int64_t slots = int64_t{kBwdCtasPerSm} * sm_count;
  if (ctas <= 0 || slots <= 0 || partial_bytes <= 0 || ctas >= kBwdMaxWavesToSplit * slots) {
    return 1;
  }
  const int64_t limit = std::min({query_blocks / kBwdMinQueryBlocksPerSplit,
                                  kBwdPartialBudgetBytes / partial_bytes, int64_t{kBwdMaxSplits}});
  int64_t best = 1;
  for (int64_t splits = 2; splits <= limit; ++splits) {
    if (bwd_split_cost(ctas, query_blocks, slots, splits) <
        bwd_split_cost(ctas, query_blocks, slots, best)) {
      best = splits;
    }
  }
  return static_cast<int>(best);
}

// The last-wave split. A grid that num_splits leaves whole (at least kBwdMaxWavesToSplit waves, or
// one the query split does not speed up) runs its tiles (key block, kv head, sequence) in waves of
// one CTA per slot, and its last wave holds tiles % slots of them: sweep-d64-n4096 on an H200 is
// 4096 tiles of 32 query blocks, 31 full waves and 4 tiles that walk all their 32 steps while 128
// SMs idle, 3 % of the backward. Splitting each tile of the tail (and of `waves` full waves before
// it, where that pays) into `parts` CTAs over contiguous shares of its query blocks fills the idle
// slots; each part writes fp32 partial dK, dV that a reduce kernel sums. The unsplit kernel runs
// the other tiles first, the split kernel (a second launch) the tail's parts after it.

/// What the last-wave split costs, in the units of the model below.
struct BwdTailCosts {
  /// Backward FLOPs one SM computes per microsecond (a step, one query block of one head against
  /// the key block, is 10 block_m x block_n x head_dim of them: five GEMMs).
  double sm_flops_per_us = 0.0;
  /// What a CTA costs beyond its steps, in steps: the K, V and first query loads it does not hide
  /// and the dK, dV epilogue.
  double cta_overhead_steps = 0.0;
  /// The fixed cost of a split in microseconds: the second main launch's gap after the first and
  /// the reduce's launch.
  double launch_us = 0.0;
  /// The partials move at this rate, bytes per microsecond (a share of the HBM bandwidth).
  double bytes_per_us = 0.0;
};

/// The sm80 backward on the H200: about 250 TFLOP/s at D = 64 and 290 at D = 128 on 132 SMs
/// (session 8's fwd and fwd+bwd rates, bench/results/2026-11-30-h200-s8); the lower one keeps the
/// fixed costs on the cautious side. The launch gaps and the bandwidth are those the forward's
/// combine measured (common/fwd_split.h).
inline constexpr BwdTailCosts kBwdTailCosts{1.9e6, 0.5, 10.0, 3.0e6};

/// Most full waves before the tail that a split may take in as well.
inline constexpr int kBwdMaxTailWaves = 2;
/// The least modelled gain a split must promise in auto mode.
inline constexpr double kBwdMinTailGain = 1.01;

/// The launch geometry the last-wave split depends on.
struct BwdTailGeometry {
  int64_t tiles = 0;         ///< key blocks x kv heads x sequences
  int64_t slots = 0;         ///< CTAs that run at a time: SMs x kBwdCtasPerSm
  int64_t query_blocks = 0;  ///< query blocks of a (sequence, head)
  int64_t group = 1;         ///< query heads per kv head: a tile walks query_blocks x group steps
  int block_m = 0;           ///< query rows of a block
  int block_n = 0;           ///< keys of a tile
  int head_dim = 0;          ///< the head-dim bucket
  BwdTailCosts costs;
};

/// The split tiles: those from tile0 on, `parts` CTAs each (parts == 1: no split, tile0 == tiles).
struct BwdTailSplit {
  int64_t tile0 = 0;
  int parts = 1;
};

/// Tiles of the last wave: tiles % slots, or a whole wave when the waves are all full.
constexpr int64_t bwd_last_wave_tiles(const BwdTailGeometry& g) {
  if (g.slots <= 0 || g.tiles <= 0) return 0;
  return g.tiles - (g.tiles - 1) / g.slots * g.slots;
}

/// Bytes of the fp32 partial dK and dV of a split.
constexpr int64_t bwd_tail_partial_bytes(const BwdTailGeometry& g, const BwdTailSplit& s) {
  return 2 * (g.tiles - s.tile0) * s.parts * g.block_n * g.head_dim *
         static_cast<int64_t>(sizeof(float));
}

/// Modelled time of the backward in steps of the busiest SM: the unsplit tiles' waves, then the
/// split tiles' parts round-robin over the slots, each part's share of the query blocks
/// (contiguous, the largest ceil(query_blocks / parts)) for every head of the group, then the
/// launches and the partials' traffic: the last round's writes, which nothing overlaps (earlier
/// rounds' writes overlap later rounds' GEMMs), and the reduce's reads and bf16 / f16 writes.
constexpr double bwd_tail_cost(const BwdTailGeometry& g, const BwdTailSplit& s) {
  if (g.slots <= 0 || g.tiles <= 0) return 0.0;
  const double overhead = g.costs.cta_overhead_steps;
  const double tile_time = static_cast<double>(g.query_blocks * g.group) + overhead;
  if (s.parts <= 1) return static_cast<double>((g.tiles + g.slots - 1) / g.slots) * tile_time;
  const int64_t split_tiles = g.tiles - s.tile0;
  const int64_t units = split_tiles * s.parts;
  const int64_t rounds = (units + g.slots - 1) / g.slots;
  const int64_t part_blocks = (g.query_blocks + s.parts - 1) / s.parts;
  const double split_time =
      static_cast<double>(rounds) * (static_cast<double>(part_blocks * g.group) + overhead);
  const double tile_bytes = 2.0 * g.block_n * g.head_dim;  // dK and dV elements of a tile
  const int64_t last_round_units = units - (rounds - 1) * g.slots;
  const double bytes = tile_bytes * (4.0 * static_cast<double>(last_round_units) +
                                     (4.0 * s.parts + 2.0) * static_cast<double>(split_tiles));
  const double step_us = 10.0 * g.block_m * g.block_n * g.head_dim / g.costs.sm_flops_per_us;
  const double extra_us = g.costs.launch_us + bytes / g.costs.bytes_per_us;
  return static_cast<double>(s.tile0 / g.slots) * tile_time + split_time + extra_us / step_us;
}

/// What FLASHVISION_SM80_BWD_TAIL_SPLIT asks for: the model's choice (auto), no split (0), the
/// model's best split even where it does not pay (1), or the last wave's tiles in that many parts
/// (2..kBwdMaxSplits).
inline constexpr int kBwdTailAuto = -1;
inline constexpr int kBwdTailOff = 0;
inline constexpr int kBwdTailOn = 1;

/// The last-wave split for `request` (kBwdTailAuto, kBwdTailOff, kBwdTailOn or a part count): in
/// auto mode the (waves, parts) with the lowest modelled time, when it is lower than without a
/// split by kBwdMinTailGain (the fewest waves, then parts, among equals); partials within
/// kBwdPartialBudgetBytes.
constexpr BwdTailSplit bwd_tail_split(const BwdTailGeometry& g, int request) {
  const BwdTailSplit none{g.tiles, 1};
  const int64_t last_wave = bwd_last_wave_tiles(g);
  if (request == kBwdTailOff || last_wave == 0) return none;
  if (request > kBwdTailOn) {
    const BwdTailSplit forced{g.tiles - last_wave, request};
    return bwd_tail_partial_bytes(g, forced) <= kBwdPartialBudgetBytes ? forced : none;
  }
  if (g.query_blocks < 2) return none;
  BwdTailSplit best = none;
  double best_cost = 0.0;
  const int64_t max_parts = std::min(g.query_blocks, int64_t{kBwdMaxSplits});
  for (int64_t waves = 0; waves <= kBwdMaxTailWaves; ++waves) {
    const int64_t tile0 = g.tiles - last_wave - waves * g.slots;
    if (tile0 < 0) break;
    for (int64_t parts = 2; parts <= max_parts; ++parts) {
      const BwdTailSplit s{tile0, static_cast<int>(parts)};
      if (bwd_tail_partial_bytes(g, s) > kBwdPartialBudgetBytes) break;
      const double cost = bwd_tail_cost(g, s);
      if (best.parts == 1 || cost < best_cost) {
        best = s;
        best_cost = cost;
      }
    }
  }
  if (request == kBwdTailAuto && !(best_cost * kBwdMinTailGain < bwd_tail_cost(g, none))) {
    return none;
  }
  return best;
}

}  // namespace flashvision::detail::sm80
