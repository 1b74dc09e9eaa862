// Inputs whose scores move a row's max across key blocks on purpose: random scores never pass a
// row's first block by the lazy max's slack (2^8 after the scale), so the paths that move the max
// (common/online_softmax.cuh, sm90/stale_max_softmax.cuh) need shaped inputs to run at all.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "attention_check.h"

namespace flashvision::testing {

/// Adds a ramp along dim 0 to every score: q[.., 0] = 1 and k[.., 0] grows (or falls) with the
/// key's position so that a row's scaled log2 scores move by `ramp` over its sequence (48: six
/// times the lazy slack; 2000: a block lies 160-350 above the one before at 1000 keys, so its
/// exponentials against the previous max overflow to infinity). Rising, the max passes the slack
/// every few key blocks (O rescaled mid-row) and stays stale in between (probabilities up to
/// 2^8); falling, the first block holds the max and later blocks' probabilities vanish.
inline void ramp_scores(RefProblem& p, bool rising, double ramp) {
  const double step_per_key = ramp / (p.resolved_scale() * std::log2(std::exp(1.0)));
  const int64_t d = p.head_dim;
  for (std::size_t i = 0; i < p.q.size(); i += static_cast<std::size_t>(d)) p.q[i] = 1.0;
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t begin = p.cu_seqlens_k[b], len = p.cu_seqlens_k[b + 1] - begin;
    for (int64_t key = 0; key < len; ++key) {
      const double position = static_cast<double>(rising ? key : len - 1 - key) / (len - 1);
      for (int64_t h = 0; h < p.heads_kv; ++h) {
        p.k[static_cast<std::size_t>(((begin + key) * p.heads_kv + h) * d)] =
            step_per_key * position;
      }
    }
  }
}

/// check_forward of `c` with scores ramped by 48 and by 2000, rising and falling.
inline void check_forward_with_ramps(const Target& target, const AttentionCase& c) {
  for (const double ramp : {48.0, 2000.0}) {
    for (const bool rising : {true, false}) {
      SCOPED_TRACE(std::string(rising ? "rising" : "falling") + " by " + std::to_string(ramp));
      CheckOptions options;
      options.shape_inputs = [rising, ramp](RefProblem& p) { ramp_scores(p, rising, ramp); };
      check_forward(target, c, options);
    }
  }
}

}  // namespace flashvision::testing
