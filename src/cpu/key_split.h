// The forward's key split: where a problem has too few (sequence, head, query block) tasks to
// keep every thread busy to the end of a call (sd15-self-16 at 16 threads: 16 streams of 256
// query rows, 5 tasks of 48 rows per thread), each query block's keys are cut into two parts run
// as separate tasks. Halving the task length halves the time threads that run at unequal speeds
// spend waiting at the end of the call. A thread that runs both parts of a block in turn (the
// usual case) just goes on with its online softmax (forward.cpp); when the parts run on two
// threads, each leaves its unnormalized O^T with its per-lane reference max and sum in a slot,
// and whichever finishes second merges the two (the usual rescale to the larger max) and writes
// the output and the log-sum-exp: a second Q^T pack, a copy of O^T and a merge, for stolen parts
// only.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "cpu/tiling.h"

namespace flashvision::detail::cpu {

/// Key parts per query block: 2 where the split is on, else 1.
/// `forced`: -1 lets the problem decide, 0 or 1 is FLASHVISION_CPU_FWD_KEY_SPLIT's override.
/// The split pays only where threads would otherwise get fewer than the 8 fine tasks that
/// choose_tiling aims at, and where each part still holds a whole key block (the per-block
/// softmax and GEMM set-up costs stay amortized); the causal mask is left to its own ordering.
inline int64_t forward_key_parts(int forced, int64_t tasks, int64_t threads, int64_t seqlen_k,
                                 bool causal, const Tiling& t) {
  if (forced >= 0) return forced == 1 ? 2 : 1;
  constexpr int64_t kFineTasksPerThread = 8;
  const bool few_tasks = tasks < kFineTasksPerThread * threads && threads > 1;
  return few_tasks && !causal && seqlen_k >= 2 * t.block_k ? 2 : 1;
}

/// Where part 1 of a query block's keys [0, key_end) starts: the block boundary nearest the
/// middle where both parts get a whole block, else the middle (a part may then be empty: a
/// forced split of a sequence with one key).
inline int64_t key_split_point(int64_t key_end, int64_t block_k) {
  if (key_end < 2 * block_k) return key_end / 2;
  return (key_end / 2 + block_k / 2) / block_k * block_k;
}

/// The partial results of every (query block, key part) of one call, and per query block the
/// count of parts that have left theirs.
class KeyPartSlots {
 public:
  /// `storage`: at least floats_needed(...) floats, kept by the caller between calls.
  KeyPartSlots(float* storage, int64_t query_blocks, int64_t head_dim, const Tiling& t)
      : storage_(storage),
        lanes_(pad_lanes(t.max_rows())),
        slot_floats_(head_dim * lanes_ + 2 * lanes_),
        done_(new std::atomic<int>[query_blocks]()) {}

  static int64_t floats_needed(int64_t query_blocks, int64_t head_dim, const Tiling& t) {
    const int64_t lanes = pad_lanes(t.max_rows());
    return 2 * query_blocks * (head_dim * lanes + 2 * lanes);
  }

  /// Whether the other part of query block `block` has left its partial result already.
  bool other_done(int64_t block) const { return done_[block].load(std::memory_order_acquire) > 0; }

  /// Leaves part `part`'s O^T (`o_rows` rows of `lanes` floats, `o_ld` apart), reference max and
  /// sum; true when the other part had left its own first, so this one must merge.
  bool publish(int64_t block, int part, const float* o_t, int64_t o_ld, int64_t o_rows,
               int64_t lanes, const float* row_max, const float* row_sum) {
    float* slot = slot_of(block, part);
    for (int64_t c = 0; c < o_rows; ++c) {
      for (int64_t i = 0; i < lanes; ++i) slot[c * lanes_ + i] = o_t[c * o_ld + i];
    }
    float* max = slot + o_rows * lanes_;
    for (int64_t i = 0; i < lanes; ++i) {
      max[i] = row_max[i];
      max[lanes_ + i] = row_sum[i];
    }
    return done_[block].fetch_add(1, std::memory_order_acq_rel) == 1;
  }

  /// Folds the other part's partial result into this part's (o_t, row_max, row_sum), which then
  /// hold the whole block's: both are rescaled to the larger reference max. `scale_own` and
  /// `scale_other` are `lanes` floats of scratch.
  void merge_other(int64_t block, int part, float* o_t, int64_t o_ld, int64_t o_rows,
                   int64_t lanes, float* row_max, float* row_sum, float* scale_own,
                   float* scale_other) const {
    const float* other = slot_of(block, 1 - part);
    const float* other_max = other + o_rows * lanes_;
    const float* other_sum = other_max + lanes_;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < lanes; ++i) {
      const float m = std::fmax(row_max[i], other_max[i]);
      // A part in which a row saw no key has max -inf and sum 0: it gets weight 0 (and a row
      // that saw no key in either part keeps max -inf, sum 0, which finish() turns into O = 0).
      scale_own[i] = row_max[i] == kNegInf ? 0.0f : std::exp2(row_max[i] - m);
      scale_other[i] = other_max[i] == kNegInf ? 0.0f : std::exp2(other_max[i] - m);
      row_sum[i] = row_sum[i] * scale_own[i] + other_sum[i] * scale_other[i];
      row_max[i] = m;
    }
    for (int64_t c = 0; c < o_rows; ++c) {
      float* own = o_t + c * o_ld;
      const float* theirs = other + c * lanes_;
      for (int64_t i = 0; i < lanes; ++i) own[i] = own[i] * scale_own[i] + theirs[i] * scale_other[i];
    }
  }

 private:
  float* slot_of(int64_t block, int part) const {
    return storage_ + (2 * block + part) * slot_floats_;
  }

  float* storage_;
  int64_t lanes_;        // floats between rows of a slot's O^T, and of its max and sum
  int64_t slot_floats_;  // one (query block, part)'s O^T, max and sum
  std::unique_ptr<std::atomic<int>[]> done_;
};

}  // namespace flashvision::detail::cpu
