// The sm80 forward with its last wave split over the keys (src/cuda/common/fwd_split.h): the CTAs
// past split_tile0 each compute one key range of a tile and write a partial O and LSE, which the
// combine kernel merges. FLASHVISION_SM80_FWD_SPLIT forces the part count, so that small shapes
// (fewer tiles than a wave: all of them in the partial one) take the split: parts whose keys end
// inside a block (the masked block the kernel walks first), partial query tiles, both tile
// variants, grouped heads, both layouts, with and without the LSE; several waves with a tail; and
// causal and varlen problems, which keep whole tiles.
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kSplitVar = "FLASHVISION_SM80_FWD_SPLIT";
constexpr const char* kTileVar = "FLASHVISION_SM80_FWD_TILE";

class GpuSm80FwdSplit : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(CudaKernel::sm80);
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DType dtype() const { return GetParam(); }
  static Target target() { return cuda_target(CudaKernel::sm80); }
};

TEST_P(GpuSm80FwdSplit, ForcedPartsMatchTheReference) {
  // 1: the model's best split; 2, 3, 5: parts of several key blocks, the last one shorter; 8: one
  // or two blocks per part (fewer parts where the keys have fewer blocks).
  for (const char* parts : {"1", "2", "3", "5", "8"}) {
    ScopedEnv env(kSplitVar, parts);
    SCOPED_TRACE(std::string(kSplitVar) + "=" + parts);
    // 900 and 1000 keys end inside a 64- or 128-key block (masked in the part that holds it);
    // query tiles full, partial, and with rows for the first warp only. D = 40, 72 and 200 pad to
    // their buckets.
    for (const int64_t dim : {40, 64, 72, 128, 200}) {
      for (const auto& [nq, nk] :
           {std::pair<int64_t, int64_t>{128, 1000}, {200, 900}, {20, 4096}}) {
        check_forward(target(), dense_case(dtype(), nq, nk, dim));
      }
    }
  }
}

TEST_P(GpuSm80FwdSplit, BothTileVariants) {
  // D = 64 and 256 have a second tile (128-key blocks; 64 rows of two CTAs an SM): the first one
  // runs where a device's shared memory does not hold two of the second.
  for (const char* variant : {"0", "1"}) {
    ScopedEnv tile_env(kTileVar, variant);
    for (const char* parts : {"2", "3", "8"}) {
      ScopedEnv env(kSplitVar, parts);
      SCOPED_TRACE(std::string(kTileVar) + "=" + variant + " " + kSplitVar + "=" + parts);
      check_forward(target(), dense_case(dtype(), 200, 1000, 64));
      check_forward(target(), dense_case(dtype(), 100, 700, 256));
    }
  }
}

TEST_P(GpuSm80FwdSplit, GroupedHeadsLayoutsAndNoLse) {
  ScopedEnv env(kSplitVar, "3");
  AttentionCase gqa = dense_case(dtype(), 400, 1500, 64);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  check_forward(target(), gqa);
  AttentionCase mqa = dense_case(dtype(), 250, 1200, 128);
  mqa.heads = 4;
  mqa.heads_kv = 1;
  mqa.layout = Layout::torch;
  check_forward(target(), mqa);
  AttentionCase torch_gqa = dense_case(dtype(), 130, 777, 96);
  torch_gqa.heads = 6;
  torch_gqa.heads_kv = 3;
  torch_gqa.layout = Layout::torch;
  check_forward(target(), torch_gqa);
  AttentionCase no_lse = dense_case(dtype(), 300, 1000, 48);
  no_lse.with_lse = false;
  no_lse.row_pad = 8;
  check_forward(target(), no_lse);
}

TEST_P(GpuSm80FwdSplit, SeveralWavesWithATail) {
  // 4 x 41 (sequence, head) pairs x 2 query blocks = 328 tiles: a full wave of 264 CTAs (132 SMs,
  // two CTAs each) and a tail of 64 (on a GPU of another SM count, another tail); whole tiles and
  // split ones side by side in one launch.
  for (const char* parts : {"1", "2", "5"}) {
    ScopedEnv env(kSplitVar, parts);
    SCOPED_TRACE(std::string(kSplitVar) + "=" + parts);
    AttentionCase c = dense_case(dtype(), 200, 1000, 64);
    c.batch = 4;
    c.heads = c.heads_kv = 41;
    check_forward(target(), c);
  }
}

TEST_P(GpuSm80FwdSplit, CausalAndVarlenKeepWholeTiles) {
  ScopedEnv env(kSplitVar, "3");
  AttentionCase causal = dense_case(dtype(), 700, 1000, 64);
  causal.causal = true;
  check_forward(target(), causal);
  AttentionCase varlen;
  varlen.dtype = dtype();
  varlen.seqlens_q = {1000, 1, 0, 193, 70};
  varlen.seqlens_k = {900, 1000, 5, 193, 0};
  varlen.heads = 4;
  varlen.heads_kv = 2;
  varlen.head_dim = 128;
  check_forward(target(), varlen);
}

TEST_P(GpuSm80FwdSplit, ABadSplitValueIsRejectedByName) {
  for (const char* value : {"9", "yes", "-1", "12"}) {
    expect_env_value_rejected(target(), dense_case(dtype(), 64, 900, 64), kSplitVar, value);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm80FwdSplit, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
