// Records of the diagnostic timelines (fwd_timeline_layout.h): thread 0 of each warpgroup of the
// first kTimelineCtas CTAs appends one a mark, where FwdParams::timeline is set. Unless
// kTimelinesCompiled the recorder is an empty class whose marks compile to nothing.
#pragma once

#include <cstdint>

#include "cuda/sm90/fwd_timeline_layout.h"
#include "cuda/sm90/params.h"

namespace flashvision::detail::sm90 {

/// The recorder of one warpgroup's timeline (kOn: kTimelinesCompiled).
template <bool kOn>
class TimelineRecorder {
 public:
  /// Role 0: the producer warpgroup; 1 + c: consumer warpgroup c.
  __device__ TimelineRecorder(const FwdParams& p, int role) {
    if (p.timeline != nullptr && blockIdx.x < kTimelineCtas && threadIdx.x % 128 == 0) {
      slot_ =
          p.timeline + (static_cast<size_t>(blockIdx.x) * kTimelineRoles + role) * kTimelineEvents;
    }
  }

  __device__ __forceinline__ void mark(TimelineEvent event) {
    if (slot_ != nullptr && count_ < kTimelineEvents) {
      long long cycle;
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(cycle)::"memory");
      slot_[count_++] =
          (static_cast<unsigned long long>(cycle) << 8) | static_cast<uint32_t>(event);
    }
  }

 private:
  unsigned long long* slot_ = nullptr;
  int count_ = 0;
};

/// Without the option: no state, no code.
template <>
class TimelineRecorder<false> {
 public:
  __device__ TimelineRecorder(const FwdParams&, int) {}
  __device__ __forceinline__ void mark(TimelineEvent) {}
};

using FwdTimeline = TimelineRecorder<kTimelinesCompiled>;

}  // namespace flashvision::detail::sm90
