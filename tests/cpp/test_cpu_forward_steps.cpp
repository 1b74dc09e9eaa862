// CPU forward steps that depend on the operands: the GEMMs read fp32 K and V rows where they lie
// when the row stride allows it (src/cpu/work.h, reads_rows_in_place) and from a packed copy
// otherwise, and the S GEMM takes each unmasked key block's max as it stores S^T. Both must agree
// with the float64 reference in every combination, including key blocks whose max jumps. The
// query blocks of a stream run last block first (src/cpu/schedule.h, query_block_at), the block
// that holds a merged remainder among them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "attention_check.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

// 333 keys make three key blocks at every head dim's default tiling, so the per-block max and
// the running max differ from block to block.
AttentionCase three_key_blocks(Layout layout, int64_t head_dim, int64_t row_pad) {
  AttentionCase c;
  c.batch = 2;
  c.seqlen_q = 200;
  c.seqlen_k = 333;
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = head_dim;
  c.layout = layout;
  c.row_pad = row_pad;
  return c;
}

TEST(CpuForwardKeyRows, InPlaceAndPackedRowsMatchReference) {
  // K and V rows are D + pad floats apart in the torch layout and 2 * D + pad (two kv heads) in
  // the flash layout. Read in place where that is a whole number of cache lines but not a multiple
  // of four (torch D = 80, 160 and flash D = 40, 80 without the pad), packed otherwise (torch D =
  // 40, 64, 128, flash D = 64, 128, 160, and every padded case: rows that start inside a line).
  for (const Layout layout : {Layout::torch, Layout::flash}) {
    for (const int64_t dim : {40, 64, 80, 128, 160}) {
      for (const int64_t pad : {0, 4}) {
        AttentionCase c = three_key_blocks(layout, dim, pad);
        c.causal = dim == 80;
        check_forward(cpu_target(), c);
      }
    }
  }
}

TEST(CpuForwardBlockMax, LaterKeysWithLargerScoresMatchReference) {
  // Keys past the first block score up to ~45x higher (log2-scaled scores of a few hundred), so
  // the running max jumps after the first block and a max not taken (or taken from the wrong
  // columns) by the GEMM would overflow exp2; causal mixes in masked blocks, whose max the softmax
  // takes itself.
  for (const bool causal : {false, true}) {
    for (const int64_t dim : {64, 80}) {
      AttentionCase c = three_key_blocks(Layout::torch, dim, 0);
      c.causal = causal;
      CheckOptions options;
      options.shape_inputs = [](RefProblem& p) {
        const int64_t width = p.heads_kv * p.head_dim;
        for (int64_t row = 0; row < p.total_k(); ++row) {
          const int64_t key = row % 333;
          const double gain = key >= 150 ? 1.0 + static_cast<double>(key - 150) / 4.0 : 1.0;
          for (int64_t i = 0; i < width; ++i) p.k[row * width + i] *= gain;
        }
      };
      // Scores this large carry float32 rounding of order 1e-4 into P (as in Numerics.HugeScores).
      options.tolerance = Tolerance{1e-4, 2e-3};
      check_forward(cpu_target(), c, options);
    }
  }
}

TEST(CpuForwardBlockOrder, LastBlockFirstCoversEveryRow) {
  // 48-row query blocks: 256 rows are 4 x 48 + 64 (the remainder merged into the last block, which
  // runs first), 71 rows one block of 71, 140 rows 48 + 92 (two grid slots past the last block
  // start none), 47 rows fewer than a block. Threads that outnumber a stream's blocks take blocks
  // of the same stream; with the key split their parts too. A block skipped or run twice leaves
  // poisoned or wrong rows.
  ScopedEnv blocks("FLASHVISION_CPU_FWD_BLOCKS", "48,64");
  for (const char* split : {"0", "1"}) {
    ScopedEnv env("FLASHVISION_CPU_FWD_KEY_SPLIT", split);
    for (const int64_t rows : {256, 71, 140, 47}) {
      for (const int threads : {1, 4, 16}) {
        for (const bool causal : {false, true}) {
          SCOPED_TRACE(std::string("split=") + split + " rows=" + std::to_string(rows) +
                       " threads=" + std::to_string(threads) + (causal ? " causal" : ""));
          AttentionCase c = three_key_blocks(Layout::torch, 160, 0);
          c.batch = 1;
          c.heads = 2;
          c.heads_kv = 2;
          c.seqlen_q = rows;
          c.seqlen_k = causal ? rows : 200;
          c.causal = causal;
          c.num_threads = threads;
          check_forward(cpu_target(), c);
        }
      }
    }
  }
}

}  // namespace
}  // namespace flashvision::testing
