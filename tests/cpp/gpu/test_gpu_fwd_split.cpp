// The sm80 and sm90 forwards with their last wave split over the keys
// (src/cuda/common/fwd_split.h): each part of a tile past split_tile0 writes a partial O and LSE to
// a workspace, and the combine kernel merges them. FLASHVISION_SM80_FWD_SPLIT /
// FLASHVISION_SM90_FWD_SPLIT force the part count, so that small shapes (fewer tiles than a wave:
// all of them in the partial one) take the split: parts whose keys end inside a block (the masked
// block a part walks first), partial query tiles, every tile of each kernel, grouped heads, both
// layouts, with and without the LSE; several waves with a tail; and causal and varlen problems,
// which keep whole tiles.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

class GpuFwdSplit : public GpuKernelTest {
 protected:
  const char* split_var() const {
    return kernel() == CudaKernel::sm80 ? "FLASHVISION_SM80_FWD_SPLIT"
                                        : "FLASHVISION_SM90_FWD_SPLIT";
  }
};

TEST_P(GpuFwdSplit, ForcedPartsMatchTheReference) {
  // 1: the model's best split; 2, 3, 5: parts of several key blocks, the last one shorter; 8: one
  // or two blocks per part (fewer parts where the keys have fewer blocks).
  for (const char* parts : {"1", "2", "3", "5", "8"}) {
    ScopedEnv env(split_var(), parts);
    SCOPED_TRACE(std::string(split_var()) + "=" + parts);
    // 900 and 1000 keys end inside a block (masked in the part that holds it); query tiles full,
    // partial, with rows for the first sm80 warps only (20) and for the first sm90 consumer only
    // (50). D = 40, 72 and 200 pad to their buckets.
    for (const int64_t dim : {40, 64, 72, 128, 200}) {
      for (const auto& [nq, nk] :
           {std::pair<int64_t, int64_t>{128, 1000}, {200, 900}, {20, 4096}, {50, 4096}}) {
        check_forward(target(), dense_case(dtype(), nq, nk, dim));
      }
    }
  }
}

/// A run-time choice of the kernel's tile and the cases that exercise it.
struct TileChoice {
  const char* var;
  const char* value;
  std::vector<AttentionCase> cases;
};

TEST_P(GpuFwdSplit, EveryTileOfTheKernel) {
  std::vector<TileChoice> tiles;
  if (kernel() == CudaKernel::sm80) {
    // D = 64 and 256 have a second tile (128-key blocks; 64 rows of two CTAs an SM): the first
    // one runs where a device's shared memory does not hold two of the second.
    for (const char* variant : {"0", "1"}) {
      tiles.push_back({"FLASHVISION_SM80_FWD_TILE",
                       variant,
                       {dense_case(dtype(), 200, 1000, 64), dense_case(dtype(), 100, 700, 256)}});
    }
  } else {
    // Three consumer warpgroups (192 rows) up to D = 80, two (128 rows) everywhere, one (64 rows,
    // half tiles) at D = 64 and 80.
    for (const char* rows : {"192", "128", "64"}) {
      tiles.push_back({"FLASHVISION_SM90_FWD_ROWS",
                       rows,
                       {dense_case(dtype(), 383, 1000, 64), dense_case(dtype(), 257, 2000, 80)}});
    }
  }
  for (const TileChoice& tile : tiles) {
    ScopedEnv tile_env(tile.var, tile.value);
    for (const char* parts : {"2", "3", "8"}) {
      ScopedEnv env(split_var(), parts);
      SCOPED_TRACE(std::string(tile.var) + "=" + tile.value + " " + split_var() + "=" + parts);
      for (const AttentionCase& c : tile.cases) check_forward(target(), c);
    }
  }
}

TEST_P(GpuFwdSplit, GroupedHeadsLayoutsAndNoLse) {
  ScopedEnv env(split_var(), "3");
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

TEST_P(GpuFwdSplit, SeveralWavesWithATail) {
  // 4 x 41 (sequence, head) pairs x 2 query blocks = 328 tiles: on 132 SMs a full wave of 264
  // sm80 CTAs (two an SM) or two waves of the persistent sm90 CTAs, and a tail of 64 (on a GPU of
  // another SM count, another tail); whole tiles and split ones side by side in one launch.
  for (const char* parts : {"1", "2", "5"}) {
    ScopedEnv env(split_var(), parts);
    SCOPED_TRACE(std::string(split_var()) + "=" + parts);
    AttentionCase c = dense_case(dtype(), 200, 1000, 64);
    c.batch = 4;
    c.heads = c.heads_kv = 41;
    check_forward(target(), c);
  }
}

TEST_P(GpuFwdSplit, CausalAndVarlenKeepWholeTiles) {
  ScopedEnv env(split_var(), "3");
  AttentionCase causal = dense_case(dtype(), 700, 1000, 64);
  causal.causal = true;
  check_forward(target(), causal);
  for (const int64_t dim : {64, 128}) {
    AttentionCase varlen;
    varlen.dtype = dtype();
    varlen.seqlens_q = {1000, 1, 0, 193, 70};
    varlen.seqlens_k = {900, 1000, 5, 193, 0};
    varlen.heads = 4;
    varlen.heads_kv = 2;
    varlen.head_dim = dim;
    check_forward(target(), varlen);
  }
}

TEST_P(GpuFwdSplit, ABadSplitValueIsRejectedByName) {
  for (const char* value : {"9", "yes", "-1", "12"}) {
    expect_env_value_rejected(target(), dense_case(dtype(), 64, 900, 64), split_var(), value);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuFwdSplit, dtype_kernel_values(), dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
