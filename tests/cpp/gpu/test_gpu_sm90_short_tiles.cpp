// Tiles of the sm90 forward whose later consumer warpgroups hold few query rows or none: lengths
// a little past whole 64s, like a ViT's class token past its patches (577 = 9 x 64 + 1 rows,
// 257 = 4 x 64 + 1). Every consumer still walks all key blocks, and a consumer's rows past the
// sequence must neither be written nor disturb the others. The cases put 1, 2, 9, 16 and 17 rows
// in the second or third consumer of a tile, narrow and wide, at head dims from 64 to 256,
// against the float64 reference; then masks, grouped heads, varlen batches, split tiles, K/V
// shared within clusters, ramped scores, and the ViT shapes. (Session 34 tried a cheaper path for
// such consumers and kept none: docs/perf-notes.md.)
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda/sm90/tile_config.h"
#include "cuda_target.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

constexpr const char* kRowsVar = "FLASHVISION_SM90_FWD_ROWS";

class GpuSm90ShortTiles : public GpuSm90Test {
 protected:
  static Target target() { return cuda_target(CudaKernel::sm90); }
};

TEST_P(GpuSm90ShortTiles, FewRowsInALaterConsumerMatchTheReference) {
  for (const int64_t dim : {64, 72, 128, 160, 256}) {
    const bool wide = sm90::wide_block_m(sm90::head_dim_bucket(dim)) != 0;
    for (const int rows : {128, 192}) {
      if (rows == 192 && !wide) continue;
      ScopedEnv env(kRowsVar, std::to_string(rows).c_str());
      SCOPED_TRACE(std::string(kRowsVar) + "=" + std::to_string(rows));
      // Consumer `consumer` of the second tile holds the extra rows; in a wide tile with
      // consumer 1, the third holds none.
      for (const int consumer : {1, 2}) {
        if (consumer * 64 >= rows) continue;
        for (const int64_t extra : {1, 2, 9, 16, 17}) {
          // 900 keys: past the short widths' reach, several key blocks, the last one masked
          // (eight of 128 at D = 64).
          check_forward(target(), dense_case(dtype(), rows + consumer * 64 + extra, 900, dim));
        }
      }
    }
  }
}

TEST_P(GpuSm90ShortTiles, MasksGroupsAndVarlen) {
  // Causal, bottom-right aligned: the few rows are a sequence's last and see all but the masked
  // keys' last few.
  for (const int64_t dim : {64, 128}) {
    AttentionCase c = dense_case(dtype(), 129, 300, dim);
    c.causal = true;
    check_forward(target(), c);
    c.seqlen_k = 129;
    check_forward(target(), c);
  }
  AttentionCase gqa = dense_case(dtype(), 200, 700, 80);
  gqa.heads = 6;
  gqa.heads_kv = 2;
  gqa.layout = Layout::torch;
  check_forward(target(), gqa);
  // Varlen: short tiles at several sequences' ends, an empty key sequence (its rows see nothing).
  AttentionCase varlen;
  varlen.dtype = dtype();
  varlen.seqlens_q = {129, 1, 65, 257, 16, 140};
  varlen.seqlens_k = {900, 1000, 5, 257, 300, 0};
  varlen.heads = 4;
  varlen.heads_kv = 2;
  for (const int64_t dim : {64, 96}) {
    varlen.head_dim = dim;
    varlen.causal = false;
    check_forward(target(), varlen);
    varlen.causal = true;
    check_forward(target(), varlen);
  }
}

TEST_P(GpuSm90ShortTiles, SplitTilesAndSharedKeys) {
  {
    // Parts of a split tile, each over its own key range.
    ScopedEnv env("FLASHVISION_SM90_FWD_SPLIT", "3");
    for (const int64_t dim : {64, 128, 256}) {
      check_forward(target(), dense_case(dtype(), 129, 2000, dim));
    }
  }
  // K and V multicast to the two CTAs of a cluster (D = 72 and 80 take it).
  ScopedEnv rows(kRowsVar, "128");
  ScopedEnv split("FLASHVISION_SM90_FWD_SPLIT", "0");
  ScopedEnv multicast("FLASHVISION_SM90_FWD_MULTICAST", "1");
  check_forward(target(), dense_case(dtype(), 193, 900, 80));
}

TEST_P(GpuSm90ShortTiles, ScoresRisingFarOverKeyBlocks) {
  // Ramped scores: a row's max moves between key blocks (or its later blocks' probabilities
  // vanish) in the consumer that holds the last rows.
  for (const int64_t dim : {64, 80, 128}) {
    check_forward_with_ramps(target(), dense_case(dtype(), 129, 900, dim));
  }
}

TEST_P(GpuSm90ShortTiles, VitSequencesWithAClassToken) {
  // ViT-L/14 at 336 px (577 tokens, D = 64), ViT-H/14 at 224 px (257, D = 80) and, where the
  // build has it, a head of 512 (the VAE's width, V and O in two slices) with 257 rows.
  check_forward(target(), dense_case(dtype(), 577, 577, 64));
  check_forward(target(), dense_case(dtype(), 257, 257, 80));
#ifdef FLASHVISION_TEST_HEAD_DIM_512
  AttentionCase vae = dense_case(dtype(), 257, 300, 512);
  vae.batch = 1;
  vae.heads = vae.heads_kv = 1;
  check_forward(target(), vae);
#endif
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90ShortTiles, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
