// The sm80 backward's query stagger (FLASHVISION_SM80_BWD_STAGGER): key block n walks its query
// blocks from block n % stagger of its range and wraps around, then the next head of its GQA group
// starts at the same block. Every case has several key blocks (so that some start past their
// first query block), several query blocks and a ragged last one, on every tile variant (forced
// with FLASHVISION_SM80_BWD_TILE): a wrong wrap skips or repeats a query block and breaks dK, dV
// or dQ against the float64 reference.
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kStaggerVar = "FLASHVISION_SM80_BWD_STAGGER";
constexpr const char* kVariantVar = "FLASHVISION_SM80_BWD_TILE";

/// 4 query heads on 2 kv heads: each CTA walks two heads, the second from the same start.
AttentionCase group_case(DType dtype, int64_t nq, int64_t nk, int64_t dim) {
  AttentionCase c = dense_case(dtype, nq, nk, dim);
  c.heads = 4;
  c.heads_kv = 2;
  return c;
}

/// The cases of one (stagger, tile variant) setting.
void check_staggered_cases(const Target& target, DType dtype) {
  // 400 queries: 7 (64-row) or 4 (128-row) query blocks, the last ragged; 330 keys: 3 (128-key)
  // or 6 (64-key) key blocks. D = 104 takes the checked dQ path, the others the unchecked one
  // on full query blocks.
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

class GpuBwdStagger : public GpuKernelTest {};

// Stagger 3 (starts 0, 1, 2: coprime with the block counts, some past a short range, taken
// modulo it) on every tile variant.
TEST_P(GpuBwdStagger, AStaggerOfThreeMatchesTheReferenceOnEveryTile) {
  ScopedEnv stagger_env(kStaggerVar, "3");
  for (const char* variant : {"0", "1", "2"}) {
    ScopedEnv variant_env(kVariantVar, variant);
    SCOPED_TRACE(std::string(kVariantVar) + "=" + variant);
    check_staggered_cases(target(), dtype());
  }
}

// A stagger above every block count: each key block starts at its own query block.
TEST_P(GpuBwdStagger, AFullStaggerMatchesTheReference) {
  ScopedEnv stagger_env(kStaggerVar, "1000000");
  check_staggered_cases(target(), dtype());
}

TEST_P(GpuBwdStagger, ABadStaggerIsRejectedByName) {
  for (const char* bad : {"0", "-2", "x", "2x", "99999999"}) {
    SCOPED_TRACE(bad);
    expect_env_value_rejected(target(), group_case(dtype(), 64, 64, 64), kStaggerVar, bad,
                              /*backward=*/true);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuBwdStagger, dtype_kernel_values(), dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
