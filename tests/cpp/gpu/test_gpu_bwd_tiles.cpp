// Every tile variant of the sm80 backward on the GPU at hand. The host takes the highest variant
// the device's shared memory allows (an H200: 128 query rows and two query slots up to D = 64,
// two slots of 64 rows above), so the variants that an A100 or a smaller GPU takes are forced
// here with FLASHVISION_SM80_BWD_TILE, which caps the choice.
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kVariantVar = "FLASHVISION_SM80_BWD_TILE";

/// The common small case with grouped heads (4 query heads on 2 kv heads).
AttentionCase tile_case(DType dtype, int64_t nq, int64_t nk, int64_t dim) {
  AttentionCase c = dense_case(dtype, nq, nk, dim);
  c.heads = 4;
  c.heads_kv = 2;
  return c;
}

class GpuBwdTileVariants : public GpuKernelTest {};

TEST_P(GpuBwdTileVariants, EveryVariantMatchesTheReference) {
  for (const char* variant : {"0", "1", "2"}) {
    ScopedEnv env(kVariantVar, variant);
    SCOPED_TRACE(std::string(kVariantVar) + "=" + variant);
    // Ragged query and key blocks (several of each), every head-dim tile family, GQA.
    for (const int64_t dim : {40, 64, 128, 256}) {
      check_backward(target(), tile_case(dtype(), 300, 200, dim));
    }
    // Causal with more queries than keys: rows that see no key, key blocks seen by few blocks.
    AttentionCase causal = tile_case(dtype(), 333, 150, 64);
    causal.causal = true;
    check_backward(target(), causal);
    // Varlen, empty and one-row sequences; deterministic (ordered dQ over all query blocks).
    AttentionCase varlen = tile_case(dtype(), 0, 0, 64);
    varlen.seqlens_q = {260, 1, 0, 129};
    varlen.seqlens_k = {131, 7, 5, 300};
    varlen.causal = true;
    check_backward(target(), varlen);
    AttentionCase deterministic = tile_case(dtype(), 400, 260, 128);
    deterministic.deterministic = true;
    check_backward(target(), deterministic);
    // A small grid: the query blocks are split over several CTAs (fp32 partial dK, dV).
    check_backward(target(), tile_case(dtype(), 1000, 77, 64));
  }
}

// The main kernel has a copy of its P^T/dS^T stores for blocks that need the mask and one for
// those that do not, and adds dQ through a checked copy (ragged query block or a head dim below its
// bucket) or an unchecked one (full block, head dim = bucket). On every variant: 360 query rows
// (full 64- and 128-row blocks, then a ragged one) against 200 keys (full key blocks, then a
// ragged, masked one); head dims 104 and 200 (columns past D in buckets 128 and 256); a causal
// square whose diagonal key blocks are masked and the others not; deterministic dQ at D = 104.
TEST_P(GpuBwdTileVariants, MaskedAndUnmaskedBlocksAndBothDqPathsMatchTheReference) {
  for (const char* variant : {"0", "1", "2"}) {
    ScopedEnv env(kVariantVar, variant);
    SCOPED_TRACE(std::string(kVariantVar) + "=" + variant);
    for (const int64_t dim : {64, 104, 128, 200, 256}) {
      check_backward(target(), tile_case(dtype(), 360, 200, dim));
    }
    AttentionCase causal = tile_case(dtype(), 384, 384, 128);
    causal.causal = true;
    check_backward(target(), causal);
    AttentionCase deterministic = tile_case(dtype(), 256, 192, 104);
    deterministic.deterministic = true;
    check_backward(target(), deterministic);
  }
}

TEST_P(GpuBwdTileVariants, ABadVariantIsRejectedByName) {
  expect_env_value_rejected(target(), tile_case(dtype(), 64, 64, 64), kVariantVar, "7",
                            /*backward=*/true);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuBwdTileVariants, dtype_kernel_values(), dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
