// The sm90 forward with its last wave split over the keys (src/cuda/common/fwd_split.h): each part
// of a tile writes a partial O and LSE to a workspace and a combine kernel merges them.
// FLASHVISION_SM90_FWD_SPLIT forces the part count, so that small shapes (fewer tiles than SMs:
// all of them in the partial wave) take the split: parts whose keys end inside a block, partial
// query tiles, both row counts of a tile, grouped heads, both layouts, with and without the LSE;
// several waves with a tail; and causal and varlen problems, which keep whole tiles.
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kSplitVar = "FLASHVISION_SM90_FWD_SPLIT";

class GpuSm90FwdSplit : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

TEST_P(GpuSm90FwdSplit, ForcedPartsMatchTheReference) {
  // 1: the model's best split; 2, 3: parts of several key blocks, the last one shorter; 8: one
  // block per part (fewer parts where the keys have fewer blocks).
  for (const char* parts : {"1", "2", "3", "8"}) {
    ScopedEnv env(kSplitVar, parts);
    SCOPED_TRACE(std::string(kSplitVar) + "=" + parts);
    // 900 and 1000 keys end inside a block (masked in the part that holds it); query tiles full,
    // partial, and with rows for the first consumer only. D = 40 and 72 pad to their buckets.
    for (const int64_t dim : {40, 64, 72, 128}) {
      for (const auto& [nq, nk] :
           {std::pair<int64_t, int64_t>{128, 1000}, {200, 900}, {50, 4096}}) {
        check_forward(target(), dense_case(dtype(), nq, nk, dim));
      }
    }
  }
}

TEST_P(GpuSm90FwdSplit, WideTilesGroupedHeadsLayoutsAndNoLse) {
  ScopedEnv env(kSplitVar, "3");
  for (const char* rows : {"192", "128"}) {
    ScopedEnv rows_env("FLASHVISION_SM90_FWD_ROWS", rows);
    SCOPED_TRACE(std::string("FLASHVISION_SM90_FWD_ROWS=") + rows);
    check_forward(target(), dense_case(dtype(), 383, 1000, 64));
    check_forward(target(), dense_case(dtype(), 257, 2000, 80));
  }
  AttentionCase gqa = dense_case(dtype(), 400, 1500, 64);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  check_forward(target(), gqa);
  AttentionCase mqa = dense_case(dtype(), 250, 1200, 128);
  mqa.heads = 4;
  mqa.heads_kv = 1;
  mqa.layout = Layout::torch;
  check_forward(target(), mqa);
  AttentionCase no_lse = dense_case(dtype(), 300, 1000, 48);
  no_lse.with_lse = false;
  no_lse.row_pad = 8;
  check_forward(target(), no_lse);
}

TEST_P(GpuSm90FwdSplit, SeveralWavesWithATail) {
  // 4 x 41 (sequence, head) pairs x 2 query blocks = 328 tiles: two full waves on 132 SMs and a
  // tail of 64 (on a GPU of another SM count, another tail); whole tiles and split ones side by
  // side in one launch, each CTA walking several.
  for (const char* parts : {"1", "2"}) {
    ScopedEnv env(kSplitVar, parts);
    SCOPED_TRACE(std::string(kSplitVar) + "=" + parts);
    AttentionCase c = dense_case(dtype(), 200, 1000, 64);
    c.batch = 4;
    c.heads = c.heads_kv = 41;
    check_forward(target(), c);
  }
}

TEST_P(GpuSm90FwdSplit, CausalAndVarlenKeepWholeTiles) {
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
  varlen.head_dim = 64;
  check_forward(target(), varlen);
}

TEST_P(GpuSm90FwdSplit, ABadSplitValueIsRejectedByName) {
  for (const char* value : {"9", "yes", "-1", "12"}) {
    expect_env_value_rejected(target(), dense_case(dtype(), 64, 900, 64), kSplitVar, value);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90FwdSplit, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
