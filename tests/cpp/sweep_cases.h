// The head-dim x sequence-length sweeps, shared by every target's tests.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attention_check.h"

namespace flashvision::testing {

/// One point of a sweep.
struct SweepPoint {
  DType dtype = DType::f32;
  int64_t head_dim = 64;
  int64_t seqlen_q = 1;
  int64_t seqlen_k = 1;
  bool causal = false;
};

/// Head dims every target must serve.
const std::vector<int64_t>& sweep_head_dims();
/// (Nq, Nk) pairs every target must serve: tiny, odd, ViT-sized and just past a power of two.
const std::vector<std::pair<int64_t, int64_t>>& sweep_lengths();

/// float32: every head dim x every length pair, full and causal.
std::vector<SweepPoint> f32_sweep();
/// f16 and bf16: every head dim on two length pairs, plus every length pair at D = 64 (causal).
std::vector<SweepPoint> low_precision_sweep();

/// The case a sweep point runs: small batch and heads, fewer of them for the long sequences;
/// causal points use the torch layout so both layouts see every head dim.
AttentionCase sweep_case(const SweepPoint& point);

/// gtest-safe name, e.g. "bf16_D72_256x77_causal".
std::string sweep_name(const SweepPoint& point);

/// Prints a sweep point by its name in gtest messages and ctest names.
void PrintTo(const SweepPoint& point, std::ostream* os);

}  // namespace flashvision::testing
