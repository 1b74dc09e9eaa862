// The CPU forward's key split (src/cpu/key_split.h): each query block's keys in two parts run as
// separate tasks whose partial results are merged by their max and sum. Forced on by
// FLASHVISION_CPU_FWD_KEY_SPLIT=1, every query block's out and lse come from the merge, so a wrong
// rescale, a lost part or a part merged twice shows against the float64 reference.
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

// sd15-self-16's shape (torch layout, D = 160, K/V read in place) at fewer heads.
AttentionCase sd15_self_16_like(int num_threads) {
  AttentionCase c;
  c.batch = 2;
  c.seqlen_q = 256;
  c.seqlen_k = 256;
  c.heads = 2;
  c.heads_kv = 2;
  c.head_dim = 160;
  c.layout = Layout::torch;
  c.num_threads = num_threads;
  return c;
}

TEST(CpuForwardKeySplit, ForcedSplitMatchesReference) {
  ScopedEnv env("FLASHVISION_CPU_FWD_KEY_SPLIT", "1");
  for (const int threads : {1, 3, 16}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    check_forward(cpu_target(), sd15_self_16_like(threads));
  }
  // GQA, odd key counts (the split point off the middle, parts of one and of several key
  // blocks), query rows that are not a whole number of blocks, packed K/V (flash layout).
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    AttentionCase c;
    c.batch = 2;
    c.seqlen_q = 131;
    c.seqlen_k = 333;
    c.heads = 4;
    c.heads_kv = 2;
    c.head_dim = 80;
    c.causal = causal;
    check_forward(cpu_target(), c);
    c.layout = Layout::torch;
    c.dtype = DType::bf16;
    check_forward(cpu_target(), c);
  }
  // Sequences with no key, one key (one part empty), fewer keys than queries under the causal
  // mask (rows that see no key in a part, or in either).
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "varlen causal" : "varlen");
    AttentionCase v;
    v.seqlens_q = {1, 97, 5, 300, 40};
    v.seqlens_k = {1, 40, 0, 333, 7};
    v.heads = 4;
    v.heads_kv = 1;
    v.head_dim = 64;
    v.causal = causal;
    check_forward(cpu_target(), v);
  }
  // Without the lse, and with blocks small enough that each part streams several key blocks.
  AttentionCase no_lse = sd15_self_16_like(4);
  no_lse.with_lse = false;
  check_forward(cpu_target(), no_lse);
  ScopedEnv blocks("FLASHVISION_CPU_FWD_BLOCKS", "48,24");
  AttentionCase small_blocks = sd15_self_16_like(5);
  small_blocks.seqlen_k = 211;
  check_forward(cpu_target(), small_blocks);
}

TEST(CpuForwardKeySplit, SplitOffAndAutoMatchReference) {
  // At 16 threads sd15-self-16's shape has few tasks per thread: "auto" splits it; "0" never does.
  for (const char* value : {"0", "auto"}) {
    SCOPED_TRACE(std::string("FLASHVISION_CPU_FWD_KEY_SPLIT=") + value);
    ScopedEnv env("FLASHVISION_CPU_FWD_KEY_SPLIT", value);
    check_forward(cpu_target(), sd15_self_16_like(16));
    AttentionCase causal = sd15_self_16_like(16);
    causal.causal = true;
    check_forward(cpu_target(), causal);
  }
}

TEST(CpuForwardKeySplit, BadValueRejectedByName) {
  const AttentionCase c = dense_case(DType::f32, 20, 20, 16);
  for (const char* value : {"2", "on", "off", "-1", "1 ", "AUTO"}) {
    SCOPED_TRACE(value);
    expect_env_value_rejected(cpu_target(), c, "FLASHVISION_CPU_FWD_KEY_SPLIT", value);
  }
}

}  // namespace
}  // namespace flashvision::testing
