// The sm80 forward's tile variants: which one a device's shared memory picks (host-only, no GPU
// needed), and every variant on the GPU at hand. An H100/H200 takes the 64-row tile of two CTAs
// per SM at D = 256, an A100 the 128-row one; both take 128-key blocks at D = 64.
// FLASHVISION_SM80_FWD_TILE caps the choice, so one GPU runs every variant; FLASHVISION_SM80_FWD_KV
// picks the K/V layout (params.h's FwdKvMode) where the variant has both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda/sm80/kv_layout.h"
#include "cuda/sm80/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

using detail::sm80::fwd_kv_swizzle_default;
using detail::sm80::fwd_kv_swizzle_fits;
using detail::sm80::fwd_smem_bytes;
using detail::sm80::fwd_tile;
using detail::sm80::fwd_tile_variant;
using detail::sm80::kHeadDimBuckets;

constexpr const char* kVariantVar = "FLASHVISION_SM80_FWD_TILE";
constexpr const char* kKvVar = "FLASHVISION_SM80_FWD_KV";

// Shared memory per SM and opt-in per block: H100/H200, A100.
constexpr std::size_t kHopperSm = 228 * 1024, kHopperBlock = 227 * 1024;
constexpr std::size_t kA100Sm = 164 * 1024, kA100Block = 163 * 1024;

TEST(FwdTileVariant, TakenWhereTwoCtasFitAnSm) {
  EXPECT_EQ(fwd_tile_variant(256, kHopperSm, kHopperBlock), 1);
  EXPECT_EQ(fwd_tile_variant(256, kA100Sm, kA100Block), 0);
  // D = 64, 128 x 128: 55 KiB, two per SM on both.
  EXPECT_EQ(fwd_tile_variant(64, kHopperSm, kHopperBlock), 1);
  EXPECT_EQ(fwd_tile_variant(64, kA100Sm, kA100Block), 1);
  for (int dim : kHeadDimBuckets) {
    if (dim == 64 || dim >= 256) continue;
    EXPECT_EQ(fwd_tile_variant(dim, kHopperSm, kHopperBlock), 0) << dim;
    EXPECT_EQ(fwd_tile(dim, 1).block_m, 0) << dim;
  }
}

TEST(FwdTileVariant, SharedMemoryOfTheTwoCtaTile) {
  // 64 query rows, 64 keys of K and of V, rows of 264 two-byte elements: two CTAs plus the 1 KiB
  // the runtime reserves for each fit 228 KiB.
  EXPECT_EQ(fwd_smem_bytes(256, 1), std::size_t{(64 + 2 * 64) * 264 * 2});
  EXPECT_LE(2 * (fwd_smem_bytes(256, 1) + 1024), kHopperSm);
  EXPECT_GT(2 * (fwd_smem_bytes(256, 1) + 1024), kA100Sm);
}

TEST(FwdKvSwizzle, OnlyWhereRowsAreWholeLinesAndCopyPassesWhole) {
  // Buckets 64 (both variants, 4 warps of 32 rows), 128 (4 warps of 32 rows) and 256 (8 and 4
  // warps of 16 rows). 192's 24 chunks a row do not divide 256 threads into whole copy passes;
  // the other buckets' rows are not whole 128-byte lines.
  const std::pair<int, int> fits[] = {{64, 0}, {64, 1}, {128, 0}, {256, 0}, {256, 1}};
  for (int dim : kHeadDimBuckets) {
    for (int variant : {0, 1}) {
      const bool expected = std::find(std::begin(fits), std::end(fits),
                                      std::pair<int, int>{dim, variant}) != std::end(fits);
      EXPECT_EQ(fwd_kv_swizzle_fits(dim, variant), expected) << dim << " variant " << variant;
    }
  }
}

TEST(FwdKvSwizzle, ByDefaultWhereItFitsButBucket64sWideTileBeforeHopper) {
  for (int dim : kHeadDimBuckets) {
    for (int variant : {0, 1}) {
      EXPECT_EQ(fwd_kv_swizzle_default(dim, variant, 9), fwd_kv_swizzle_fits(dim, variant)) << dim;
      const bool before_hopper = fwd_kv_swizzle_fits(dim, variant) && !(dim == 64 && variant == 1);
      EXPECT_EQ(fwd_kv_swizzle_default(dim, variant, 8), before_hopper) << dim;
    }
  }
  EXPECT_FALSE(fwd_kv_swizzle_default(64, 1, 8));
  EXPECT_TRUE(fwd_kv_swizzle_default(64, 1, 9));
  EXPECT_TRUE(fwd_kv_swizzle_default(128, 0, 8));
}

class GpuFwdTileVariants : public GpuKernelTest {};

TEST_P(GpuFwdTileVariants, EveryVariantMatchesTheReference) {
  for (const char* variant : {"0", "1"}) {
    ScopedEnv env(kVariantVar, variant);
    SCOPED_TRACE(std::string(kVariantVar) + "=" + variant);
    // Ragged query and key blocks (several of each, 64- and 128-row), head dims below their
    // bucket (columns past D) and equal to it, GQA.
    for (const int64_t dim : {56, 64, 200, 256}) {
      AttentionCase c = dense_case(dtype(), 300, 200, dim);
      c.heads = 4;
      c.heads_kv = 2;
      check_forward(target(), c);
    }
    for (const int64_t dim : {64, 256}) {
      // Causal with more queries than keys (rows that see no key), then varlen with empty and
      // one-row sequences.
      AttentionCase causal = dense_case(dtype(), 333, 150, dim);
      causal.causal = true;
      check_forward(target(), causal);
      AttentionCase varlen = dense_case(dtype(), 0, 0, dim);
      varlen.seqlens_q = {260, 1, 0, 129};
      varlen.seqlens_k = {131, 7, 5, 300};
      varlen.causal = true;
      check_forward(target(), varlen);
    }
  }
}

TEST_P(GpuFwdTileVariants, EveryKvModeMatchesTheReference) {
  // Each layout in both tile variants of the swizzled buckets 64, 128 and 256: full and partial
  // key tiles (keys 1, 63, 129 and 200 leave 1, 63, 1 and 8 rows of the last 64-key tile, 1, 63,
  // 1 and 72 of the last 128-key one), head dims below the bucket (zero-filled columns; a non-zero
  // one would leak into P V), a full and a partial query tile, GQA, causal with rows that see no
  // key, varlen. The modes fall back to padded K and V elsewhere, which D = 96 checks (and bucket
  // 128 in variant 1, which it lacks).
  for (const char* mode : {"padded", "swizzled"}) {
    for (const char* variant : {"0", "1"}) {
      ScopedEnv kv_env(kKvVar, mode);
      ScopedEnv tile_env(kVariantVar, variant);
      SCOPED_TRACE(std::string(kKvVar) + "=" + mode + " " + kVariantVar + "=" + variant);
      for (const int64_t dim : {56, 64, 96, 120, 128, 200, 248, 256}) {
        for (const int64_t keys : {1, 63, 129, 200}) {
          SCOPED_TRACE("D=" + std::to_string(dim) + " Nk=" + std::to_string(keys));
          AttentionCase c = dense_case(dtype(), 160, keys, dim);
          c.heads = 4;
          c.heads_kv = 2;
          check_forward(target(), c);
        }
      }
      for (const int64_t dim : {64, 128, 256}) {
        SCOPED_TRACE("D=" + std::to_string(dim));
        AttentionCase causal = dense_case(dtype(), 333, 150, dim);
        causal.causal = true;
        check_forward(target(), causal);
        AttentionCase varlen = dense_case(dtype(), 0, 0, dim);
        varlen.seqlens_q = {260, 1, 0, 129};
        varlen.seqlens_k = {131, 7, 5, 300};
        varlen.causal = true;
        check_forward(target(), varlen);
      }
    }
  }
}

TEST_P(GpuFwdTileVariants, ABadKvModeIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 64, 256), kKvVar, "lines");
}

TEST_P(GpuFwdTileVariants, ABadVariantIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 64, 256), kVariantVar, "2");
}

// The sm80 forward only: the Hopper forward has tiles of its own.
INSTANTIATE_TEST_SUITE_P(Cuda, GpuFwdTileVariants,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values(CudaKernel::sm80)),
                         dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
