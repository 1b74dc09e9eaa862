// Whether and how a forward kernel (sm80 or sm90) splits the tiles of its last, partial wave over
// the keys. A pure host-side function of the launch geometry, kept apart from the CUDA code so
// that it can be unit-tested without a GPU.
//
// A forward runs `tiles` tiles on `ctas` CTAs at a time (the sm90 forward's persistent CTAs, one
// per SM; the sm80 forward's resident CTAs, SMs x CTAs per SM), so its last wave holds
// tiles % ctas of them and leaves the other CTA slots idle for a whole tile's time
// (sdxl-self-128 on sm90: 440 tiles on 132 SMs, 44 in the fourth wave). Splitting each tile of
// that wave into `parts` key ranges, computed by different CTAs, fills the idle slots; a combine
// kernel (fwd_combine.h) then merges the parts' partial O through their LSEs.
#pragma once

#include <algorithm>

namespace flashvision::detail {

/// Most key-range parts of a tile.
inline constexpr int kFwdMaxSplitParts = 8;

/// What a kernel's split costs, in the units of the model below.
struct FwdSplitCosts {
  /// Dense FLOPs one SM computes per microsecond, shared by the CTAs it runs at a time, to express
  /// a key block's time in microseconds.
  double sm_flops_per_us = 0.0;
  /// What a work unit costs beyond its key blocks, in key blocks: the pipeline fill that the
  /// kernel does not hide (a unit's first Q and K loads), the final P V and the epilogue.
  double unit_overhead_blocks = 0.0;
  /// The combine's fixed cost in microseconds: its launch and gap, the workspace's stream-ordered
  /// allocation and the split units' fp32 epilogues.
  double combine_launch_us = 0.0;
};

/// The sm90 forward: one persistent CTA per SM at about 460 TFLOP/s on 132 SMs (the forward's
/// speed on long D = 64 sequences); a unit costs more than the kernel's block overhead
/// (sm90/tile_config.h's kBlockOverheadKeys, a quarter of a 128-key block). The combine's 15 us fit
/// what the H200 measured (session 6, call 6 of bench/results/2026-11-29-h200-v8): sdxl-self-128
/// 208 -> 192 us (modelled 1.09x, seen 1.085x), sd15-self-64 148 -> 158 us (modelled 0.95x with
/// three parts, seen 0.94x), and gains within 2 % on the sweep and flux-1024, where the model gives
/// 1.00-1.02x.
inline constexpr FwdSplitCosts kSm90FwdSplitCosts{3.5e6, 1.0, 15.0};

/// The sm80 forward on Hopper: about 330 TFLOP/s on 132 SMs at D = 128, shared by the two CTAs an
/// SM holds there. A CTA alone on its SM in the last wave ran no faster: on the H200 (Nsight
/// Compute), flux-1024's busiest SM took 1.60 M cycles against 1.31 M on average, the ratio of four
/// waves to the 3.27 its 864 tiles fill. A unit, a CTA of its own, loads its Q and first K block
/// unhidden as a whole tile does; the combine is the same kernel as sm90's.
inline constexpr FwdSplitCosts kSm80FwdSplitCosts{2.5e6, 1.0, 15.0};

/// The least modelled gain a split must promise in auto mode: below it the run-to-run spread is
/// larger than the gain.
inline constexpr double kFwdMinSplitGain = 1.02;
/// The combine's bytes move at this share of the H200's HBM bandwidth, in bytes per microsecond.
inline constexpr double kFwdCombineBytesPerUs = 3.0e6;

/// The launch geometry the split choice depends on.
struct FwdSplitGeometry {
  long long tiles = 0;  ///< tiles of the schedule (query blocks x heads x sequences)
  int ctas = 0;         ///< CTAs that run at a time (a wave): SMs x ctas_per_sm
  int key_blocks = 0;   ///< key blocks of every tile (the split applies to dense non-causal only)
  int block_m = 0;      ///< query rows of a tile
  int block_n = 0;      ///< keys of a block
  int head_dim = 0;     ///< columns of Q, K (the head-dim bucket)
  int value_cols = 0;   ///< columns of V and of the partial O (the bucket's value_columns)
  FwdSplitCosts costs;  ///< the kernel's (kSm90FwdSplitCosts, kSm80FwdSplitCosts)
  int ctas_per_sm = 1;  ///< CTAs an SM runs at a time, which share its speed
};

/// The split of a tail tile: `parts` key ranges of `blocks_per_part` key blocks each, the last
/// one possibly fewer (never none). parts == 1: no split.
struct FwdSplit {
  int parts = 1;
  int blocks_per_part = 0;
};

/// Tiles of the last wave, which the split applies to: 0 when the waves are all full.
constexpr long long fwd_tail_tiles(const FwdSplitGeometry& g) {
  return g.ctas > 0 ? g.tiles % g.ctas : 0;
}

/// The split of `parts` requested parts: its blocks per part, and only as many parts as those
/// need (32 blocks in 3 parts: 11 + 11 + 10; 8 blocks in 5 parts: 2 + 2 + 2 + 2, four parts).
constexpr FwdSplit fwd_split_of(int key_blocks, int parts) {
  if (parts <= 1 || key_blocks <= 1) return {1, key_blocks};
  const int per = (key_blocks + parts - 1) / parts;
  return {(key_blocks + per - 1) / per, per};
}

/// Modelled time of the schedule, in key blocks of the busiest CTA (plus the combine in the same
/// units): full waves of whole tiles, then the tail's units round-robin over the CTA slots.
constexpr double fwd_split_cost(const FwdSplitGeometry& g, const FwdSplit& s) {
  if (g.ctas <= 0) return 0.0;
  const long long tail = fwd_tail_tiles(g);
  const long long full_waves = g.tiles / g.ctas;
  const double tile_time = g.key_blocks + g.costs.unit_overhead_blocks;
  if (s.parts <= 1 || tail == 0) return static_cast<double>(full_waves + (tail > 0)) * tile_time;
  const long long units = tail * s.parts;
  const long long rounds = (units + g.ctas - 1) / g.ctas;
  const double tail_time =
      static_cast<double>(rounds) * (s.blocks_per_part + g.costs.unit_overhead_blocks);
  // The combine reads every part's fp32 O and LSE and writes O. (The units' own writes of the
  // partials overlap the other units' GEMMs, and the combine mostly finds them in L2; reading
  // them at HBM speed keeps the model on the cautious side.)
  const double bytes = static_cast<double>(tail) * g.block_m *
                       (static_cast<double>(g.value_cols) * (4.0 * s.parts + 2.0) + 4.0 * s.parts);
  const double combine_us = g.costs.combine_launch_us + bytes / kFwdCombineBytesPerUs;
  const double block_us =
      4.0 * g.block_m * g.block_n * g.head_dim * g.ctas_per_sm / g.costs.sm_flops_per_us;
  return static_cast<double>(full_waves) * tile_time + tail_time + combine_us / block_us;
}

/// What FLASHVISION_SM90_FWD_SPLIT and FLASHVISION_SM80_FWD_SPLIT ask for: the model's choice
/// (auto), no split (0), the model's best split even where it does not pay (1), or that many parts
/// (2..kFwdMaxSplitParts).
inline constexpr int kFwdSplitAuto = -1;
inline constexpr int kFwdSplitOff = 0;
inline constexpr int kFwdSplitOn = 1;

/// The split of the last wave's tiles for `request` (kFwdSplitAuto, kFwdSplitOff, kFwdSplitOn or
/// a part count): in auto mode the part count with the lowest modelled time, when it is lower
/// than without a split by kFwdMinSplitGain (the fewest parts among equals).
constexpr FwdSplit fwd_tail_split(const FwdSplitGeometry& g, int request) {
  const FwdSplit none{1, g.key_blocks};
  if (request == kFwdSplitOff || fwd_tail_tiles(g) == 0 || g.key_blocks < 2) return none;
  if (request > kFwdSplitOn) return fwd_split_of(g.key_blocks, request);
  FwdSplit best = none;
  double best_cost = 0.0;
  for (int parts = 2; parts <= std::min(kFwdMaxSplitParts, g.key_blocks); ++parts) {
    const FwdSplit s = fwd_split_of(g.key_blocks, parts);
    const double cost = fwd_split_cost(g, s);
    if (best.parts == 1 || cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  if (request == kFwdSplitAuto && !(best_cost * kFwdMinSplitGain < fwd_split_cost(g, none))) {
    return none;
  }
  return best;
}

}  // namespace flashvision::detail
