// The sm80 backward's run-time options, each on every tile variant (forced with
// FLASHVISION_SM80_BWD_TILE) against the float64 reference:
// - FLASHVISION_SM80_BWD_STAGGER: key block n walks its query blocks from block n % stagger of its
//   range and wraps around, then the next head of its GQA group starts at the same block. A wrong
//   wrap skips or repeats a query block and breaks dK, dV or dQ.
// - FLASHVISION_SM80_BWD_SDP=split: one warp group computes S^T and writes P^T, the other dP^T and
//   dS^T from that P^T. A missing wait, a wrong warp tile or mask breaks dK (and dQ) or dV.
// - FLASHVISION_SM80_BWD_SDP=shared: every warp computes tiles of every GEMM (the default but on
//   Hopper at head dims 65-256).
// - FLASHVISION_SM80_BWD_SDP=groups: as split, and the S group accumulates dV, the dP group dK,
//   each group adds half of dQ's columns (both halves checked through the head dims below their
//   bucket: D = 104 ends inside the second half).
// - FLASHVISION_SM80_BWD_DQ_LAYOUT=rows: the dQ workspace in rows (the default is 8 x 8 tiles, what
//   every other test runs); with warp groups too, whose dQ halves add by column ranges. A wrong
//   offset in the atomics or the convert kernel breaks dQ; the varlen case starts sequences
//   inside 8-row groups (390, 391) and its heads are 591 rows (tiled: 592 apart).
// Every case has several key blocks (so that some start past their first query block), several
// query blocks with a ragged last one, and grouped heads (each CTA walks two query heads).
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kStaggerVar = "FLASHVISION_SM80_BWD_STAGGER";
constexpr const char* kSdpVar = "FLASHVISION_SM80_BWD_SDP";
constexpr const char* kVariantVar = "FLASHVISION_SM80_BWD_TILE";
constexpr const char* kDqLayoutVar = "FLASHVISION_SM80_BWD_DQ_LAYOUT";

/// 4 query heads on 2 kv heads.
AttentionCase group_case(DType dtype, int64_t nq, int64_t nk, int64_t dim) {
  AttentionCase c = dense_case(dtype, nq, nk, dim);
  c.heads = 4;
  c.heads_kv = 2;
  return c;
}

/// The cases of one setting of the options, on every tile variant.
void check_cases_on_every_tile(const Target& target, DType dtype) {
  for (const char* variant : {"0", "1", "2"}) {
    ScopedEnv variant_env(kVariantVar, variant);
    SCOPED_TRACE(std::string(kVariantVar) + "=" + variant);
    // 400 queries: 7 (64-row) or 4 (128-row) query blocks, the last ragged; 330 keys: 3 (128-key)
    // or 6 (64-key) key blocks, the last masked. D = 104 takes the checked dQ path, the others
    // the unchecked one on full query blocks.
    for (const int64_t dim : {64, 104, 128, 256}) {
      check_backward(target, group_case(dtype, 400, 330, dim));
    }
    // Causal with more queries than keys: each key block's range starts at a different block.
    AttentionCase causal = group_case(dtype, 700, 400, 64);
    causal.causal = true;
    check_backward(target, causal);
    // Varlen: ranges of different lengths per sequence, an empty one and a one-row one.
    AttentionCase varlen = group_case(dtype, 0, 0, 128);
    varlen.seqlens_q = {390, 1, 0, 200};
    varlen.seqlens_k = {300, 9, 4, 260};
    varlen.causal = true;
    check_backward(target, varlen);
    // A small grid: the query split's share is the walked range.
    check_backward(target, group_case(dtype, 1000, 77, 64));
    // Deterministic runs ignore the stagger and stay exact.
    AttentionCase deterministic = group_case(dtype, 400, 260, 128);
    deterministic.deterministic = true;
    check_backward(target, deterministic);
  }
}

class GpuBwdOptions : public GpuKernelTest {};

// Stagger 3: starts 0, 1, 2, coprime with the block counts, some past a short range (taken
// modulo it).
TEST_P(GpuBwdOptions, AStaggerOfThreeMatchesTheReference) {
  ScopedEnv stagger_env(kStaggerVar, "3");
  check_cases_on_every_tile(target(), dtype());
}

// A stagger above every block count: each key block starts at its own query block.
TEST_P(GpuBwdOptions, AFullStaggerMatchesTheReference) {
  ScopedEnv stagger_env(kStaggerVar, "1000000");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, SplitSdpMatchesTheReference) {
  ScopedEnv sdp_env(kSdpVar, "split");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, SplitSdpWithAStaggerMatchesTheReference) {
  ScopedEnv sdp_env(kSdpVar, "split");
  ScopedEnv stagger_env(kStaggerVar, "2");
  check_cases_on_every_tile(target(), dtype());
}

// Shared warps, forced: on Hopper the default of head dims 65-256 is groups (cuda_backend.cpp).
TEST_P(GpuBwdOptions, SharedWarpsMatchTheReference) {
  ScopedEnv sdp_env(kSdpVar, "shared");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, WarpGroupsMatchTheReference) {
  ScopedEnv sdp_env(kSdpVar, "groups");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, WarpGroupsWithAStaggerMatchTheReference) {
  ScopedEnv sdp_env(kSdpVar, "groups");
  ScopedEnv stagger_env(kStaggerVar, "5");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, DqInRowsMatchesTheReference) {
  ScopedEnv layout_env(kDqLayoutVar, "rows");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, DqInRowsWithWarpGroupsMatchesTheReference) {
  ScopedEnv layout_env(kDqLayoutVar, "rows");
  ScopedEnv sdp_env(kSdpVar, "groups");
  check_cases_on_every_tile(target(), dtype());
}

// Tiles, named: the default, with shared warps (the default at D <= 96 and off Hopper).
TEST_P(GpuBwdOptions, DqInTilesWithSharedWarpsMatchesTheReference) {
  ScopedEnv layout_env(kDqLayoutVar, "tiles");
  ScopedEnv sdp_env(kSdpVar, "shared");
  check_cases_on_every_tile(target(), dtype());
}

TEST_P(GpuBwdOptions, BadValuesAreRejectedByName) {
  for (const char* bad : {"0", "-2", "x", "2x", "99999999"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kStaggerVar, bad,
                              /*backward=*/true);
  }
  for (const char* bad : {"Split", "both", "1"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kSdpVar, bad,
                              /*backward=*/true);
  }
  for (const char* bad : {"Rows", "tiled", "0"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kDqLayoutVar, bad,
                              /*backward=*/true);
  }
}

// The options belong to the sm80 kernel (the sm90 target runs the Hopper backward where it can).
INSTANTIATE_TEST_SUITE_P(Cuda, GpuBwdOptions,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values(CudaKernel::sm80)),
                         dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
