// The sm80 backward's last-wave split (FLASHVISION_SM80_BWD_TAIL_SPLIT, src/cuda/sm80/bwd_split.h):
// the tiles (key block, kv head, sequence) of the grid's last wave run as several CTAs each, over
// contiguous shares of the query blocks, whose fp32 partial dK, dV a reduce kernel sums; the other
// tiles run unsplit in a launch before. Forced part counts against the float64 reference, each
// check first asserting that the split ran (its partials change the workspace):
// - grids of one wave (the GPU's SM count) plus a few tiles, so that both launches run, at several
//   head-dim buckets, with grouped heads and with more parts than query blocks (empty parts);
// - grids under a wave (every tile split) on every tile variant and warp-roles mode, causal,
//   varlen with empty and one-row sequences, and the dQ workspace in rows.
// Auto mode, on a grid of two waves plus four tiles of 16 query blocks, must split and give what
// no split gives. Forced splits replace the query split of small grids; auto mode leaves grids
// under two waves to that split. A wrong tile offset, part share or partial row breaks dK or dV
// (and unwritten rows stay poisoned); a wrong query range breaks dQ too.
// On sm_90 the split kernel starts early, as a programmatic dependent launch
// (FLASHVISION_SM80_BWD_TAIL_PDL): mixed grids of several waves must match the reference with and
// without it (a split CTA that ended before the unsplit grid, or read its writes, would not).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kTailVar = "FLASHVISION_SM80_BWD_TAIL_SPLIT";
constexpr const char* kVariantVar = "FLASHVISION_SM80_BWD_TILE";
constexpr const char* kSdpVar = "FLASHVISION_SM80_BWD_SDP";
constexpr const char* kDqLayoutVar = "FLASHVISION_SM80_BWD_DQ_LAYOUT";
constexpr const char* kEarlyStartVar = "FLASHVISION_SM80_BWD_TAIL_PDL";

/// SMs of GPU 0: one backward CTA each, a wave of the grid.
int64_t sm_count() {
  int count = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return count;
}

/// The backward's workspace bytes for `run` with FLASHVISION_SM80_BWD_TAIL_SPLIT = `value`.
std::size_t workspace_with(AttentionRun& run, const char* value) {
  ScopedEnv env(kTailVar, value);
  return run.backward_workspace_bytes();
}

/// check_backward of `c` with FLASHVISION_SM80_BWD_TAIL_SPLIT = `parts`, after asserting that the
/// last wave is split: its compact partials change the workspace, adding to an unsplit grid's and
/// replacing the larger query-split partials of a grid under two waves.
void check_tail_split(const Target& target, const AttentionCase& c, const char* parts) {
  ScopedEnv env(kTailVar, parts);
  SCOPED_TRACE(std::string(kTailVar) + "=" + parts);
  CheckOptions options;
  options.run_backward = [parts](AttentionRun& run) {
    EXPECT_NE(workspace_with(run, parts), workspace_with(run, "0"))
        << "the last wave was not split";
    run.backward();
  };
  check_backward(target, c, options);
}

/// A dense case of two sequences whose grid is one wave plus at least `extra` tiles: 130 keys (two
/// key blocks of 128 keys up to D = 128, three of 64 above, the last of 2), 333 queries (3 blocks
/// of 128 rows or 6 of 64, the last ragged), `group` query heads per kv head.
AttentionCase wave_plus(DType dtype, int64_t dim, int64_t group, int64_t extra) {
  const int64_t key_blocks = dim <= 128 ? 2 : 3;
  AttentionCase c = dense_case(dtype, 333, 130, dim);
  c.batch = 2;
  c.heads_kv = (sm_count() + extra + 2 * key_blocks - 1) / (2 * key_blocks);
  c.heads = c.heads_kv * group;
  return c;
}

/// 4 query heads on 2 kv heads.
AttentionCase group_case(DType dtype, int64_t nq, int64_t nk, int64_t dim) {
  AttentionCase c = dense_case(dtype, nq, nk, dim);
  c.heads = 4;
  c.heads_kv = 2;
  return c;
}

class GpuBwdTailSplit : public GpuKernelTest {};

TEST_P(GpuBwdTailSplit, MixedGridsMatchTheReference) {
  // Shares of 6 query blocks of 64 rows (or 3 of 128) in 4 parts: 1, 2, 1, 2 (0, 1, 1, 1).
  for (const int64_t dim : {40, 64, 128})
    check_tail_split(target(), wave_plus(dtype(), dim, 1, 9), "4");
  // Grouped heads: each part walks its share for both query heads; 7 parts leave empty ones.
  check_tail_split(target(), wave_plus(dtype(), 64, 2, 5), "7");
  check_tail_split(target(), wave_plus(dtype(), 96, 1, 3), "2");
  check_tail_split(target(), wave_plus(dtype(), 256, 1, 6), "3");
}

TEST_P(GpuBwdTailSplit, EarlyStartOnAndOffMatchesTheReference) {
  // Three waves plus a few tiles: the split CTAs start while the unsplit grid's last wave runs.
  for (const char* early : {"1", "0"}) {
    ScopedEnv early_env(kEarlyStartVar, early);
    SCOPED_TRACE(std::string(kEarlyStartVar) + "=" + early);
    AttentionCase c = wave_plus(dtype(), 64, 1, 9);
    c.batch = 6;
    check_tail_split(target(), c, "4");
    check_tail_split(target(), wave_plus(dtype(), 128, 2, 5), "7");
  }
}

TEST_P(GpuBwdTailSplit, EveryTileAndWarpRolesMatchTheReference) {
  for (const char* variant : {"0", "1", "2"}) {
    ScopedEnv variant_env(kVariantVar, variant);
    for (const char* roles : {"shared", "split", "groups"}) {
      ScopedEnv roles_env(kSdpVar, roles);
      SCOPED_TRACE(std::string(kVariantVar) + "=" + variant + " " + kSdpVar + "=" + roles);
      // 400 queries: 7 (64-row) or 4 (128-row) query blocks; 330 keys: 3 or 6 key blocks.
      check_tail_split(target(), group_case(dtype(), 400, 330, 64), "3");
      // D = 128 has no variant 2 (the cap then picks 1).
      if (std::string(variant) != "2") {
        check_tail_split(target(), group_case(dtype(), 400, 330, 128), "5");
      }
    }
  }
}

TEST_P(GpuBwdTailSplit, CausalMatchesTheReference) {
  // More queries than keys (each key block's range starts at another block), and Nq = Nk, where
  // late key blocks see fewer query blocks than there are parts.
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{700, 400}, {520, 520}}) {
    AttentionCase c = group_case(dtype(), nq, nk, 64);
    c.causal = true;
    check_tail_split(target(), c, "4");
  }
  AttentionCase mixed = wave_plus(dtype(), 128, 1, 7);
  mixed.causal = true;
  check_tail_split(target(), mixed, "3");
}

TEST_P(GpuBwdTailSplit, VarlenMatchesTheReference) {
  for (const bool causal : {false, true}) {
    AttentionCase c = group_case(dtype(), 0, 0, 128);
    c.seqlens_q = {390, 1, 0, 200};
    c.seqlens_k = {300, 9, 4, 260};
    c.causal = causal;
    check_tail_split(target(), c, "3");
    AttentionCase odd = group_case(dtype(), 0, 0, 80);
    odd.seqlens_q = {77, 513, 129};
    odd.seqlens_k = {300, 1, 129};
    odd.causal = causal;
    check_tail_split(target(), odd, "6");
  }
}

TEST_P(GpuBwdTailSplit, DqInRowsMatchesTheReference) {
  ScopedEnv layout_env(kDqLayoutVar, "rows");
  check_tail_split(target(), group_case(dtype(), 400, 330, 64), "2");
  check_tail_split(target(), wave_plus(dtype(), 64, 1, 4), "5");
}

TEST_P(GpuBwdTailSplit, DeterministicRunsAreNotSplit) {
  AttentionCase c = group_case(dtype(), 400, 330, 64);
  c.deterministic = true;
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " " + c.describe());
  std::mt19937_64 rng(seed);
  AttentionRun run(target(), c, draw_inputs(c, rng));
  EXPECT_EQ(workspace_with(run, "4"), workspace_with(run, "0"));
  // ... and stay exact and bitwise reproducible with the split asked for.
  ScopedEnv env(kTailVar, "4");
  CheckOptions options;
  options.run_backward = run_backward_twice_expect_identical;
  check_backward(target(), c, options);
}

TEST_P(GpuBwdTailSplit, AutoSplitsAPartialLastWaveAndMatchesNoSplit) {
  // Two waves plus 4 tiles of one key block and 16 query blocks of 128 rows (at D = 64; 32 of 64
  // rows elsewhere): the model splits the 4 tail tiles (bwd_split.h); the result must be what the
  // unsplit grid gives.
  AttentionCase c = dense_case(dtype(), 2048, 128, 64);
  c.batch = 1;
  c.heads = c.heads_kv = 2 * sm_count() + 4;
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " " + c.describe());
  std::mt19937_64 rng(seed);
  AttentionRun run(target(), c, draw_inputs(c, rng));
  run.forward();
  ASSERT_GT(workspace_with(run, "auto"), workspace_with(run, "0")) << "auto did not split";
  TensorRead dq, dk, dv;
  {
    ScopedEnv env(kTailVar, "0");
    run.backward();
    dq = run.read_dq();
    dk = run.read_dk();
    dv = run.read_dv();
  }
  ScopedEnv env(kTailVar, "auto");
  run.backward();
  const Tolerance tol = output_tolerance(dtype());
  EXPECT_TRUE(matches_reference("dq", run.read_dq(), dq.values, tol));
  EXPECT_TRUE(matches_reference("dk", run.read_dk(), dk.values, tol));
  EXPECT_TRUE(matches_reference("dv", run.read_dv(), dv.values, tol));
}

TEST_P(GpuBwdTailSplit, BadValuesAreRejectedByName) {
  for (const char* bad : {"x", "-1", "129", "2x", "Auto", "1000"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kTailVar, bad,
                              /*backward=*/true);
  }
  for (const char* bad : {"2", "on", "-1", " 1"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kEarlyStartVar, bad,
                              /*backward=*/true);
  }
}

// The split belongs to the sm80 kernel (the sm90 target runs the Hopper backward where it can).
INSTANTIATE_TEST_SUITE_P(Cuda, GpuBwdTailSplit,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values(CudaKernel::sm80)),
                         dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
