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

}  // namespace flashvision::detail::sm80
