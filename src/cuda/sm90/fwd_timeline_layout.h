// Diagnostic timelines of the sm90 forward (docs/hopper.md, "Timelines"): what the device records
// and the host writes out, in builds configured with FLASHVISION_SM90_TIMELINES=ON. Elsewhere
// kTimelinesCompiled is false, nothing is recorded and the kernels are those of a build without it.
// python/flashvision/bench/timelines.py reads the file and names the events by these numbers.
#pragma once

#include <cstdint>

#ifndef FLASHVISION_SM90_TIMELINES
#define FLASHVISION_SM90_TIMELINES 0
#endif

namespace flashvision::detail::sm90 {

inline constexpr bool kTimelinesCompiled = FLASHVISION_SM90_TIMELINES != 0;

/// One timeline for each warpgroup (role 0 the producer's, 1 .. 3 the consumers') of the first
/// kTimelineCtas CTAs, of up to kTimelineEvents records each: (clock64 << 8) | event, the SM's
/// cycle counter, so that only the records of one CTA compare.
inline constexpr int kTimelineCtas = 8;
inline constexpr int kTimelineRoles = 4;
inline constexpr int kTimelineEvents = 8192;

enum class TimelineEvent : uint32_t {
  kTurnWait = 1,          ///< a consumer waits for its GEMM turn
  kTurnHeld = 2,          ///< ... has it
  kTurnPassed = 3,        ///< ... has issued its GEMMs and passed the turn on
  kScoresReady = 4,       ///< S = Q K^T has completed
  kSoftmaxDone = 5,       ///< a block's softmax (and the rescale of O where it follows) is done
  kValuesDone = 6,        ///< O += P V has completed
  kFinishDone = 7,        ///< a unit's epilogue (whole or partial) is done
  kQWait = 8,             ///< a consumer waits for a tile's Q
  kQLanded = 9,           ///< ... Q has landed
  kQScaled = 10,          ///< ... and is scaled (where the kernel scales Q)
  kBlocksWait = 11,       ///< a consumer waits for the K and V of its next step
  kBlocksLanded = 12,     ///< ... they have landed
  kUnitStart = 13,        ///< a consumer starts a unit
  kProducerQWait = 20,    ///< the producer waits for a free Q buffer
  kProducerQIssued = 21,  ///< ... has issued a tile's Q load
  kProducerKIssued = 22,  ///< ... a K block's
  kProducerVIssued = 23,  ///< ... a V block's (16-bit V, loaded as it lies)
};

/// The file the host writes: this header, then the kTimelineCtas x kTimelineRoles x
/// kTimelineEvents records (0: none), little-endian.
struct TimelineFileHeader {
  int32_t ctas, roles, events, block_m, block_n, units;
};

}  // namespace flashvision::detail::sm90
