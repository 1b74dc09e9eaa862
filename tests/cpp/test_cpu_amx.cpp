// The CPU's AMX-BF16 forward (src/cpu/amx_forward.cpp): FLASHVISION_CPU_AMX=1 runs it for bf16
// inputs on every CPU, with the real tiles where the CPU has AMX and an exact emulation of them
// elsewhere, so these checks exercise its packing, tiling and softmax on any machine; the
// NativeTiles test runs only where the real instructions are used. Also which calls it takes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention_check.h"
#include "flashvision/flashvision.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

/// The kernel a small forward call of `dtype` would run on the CPU.
std::string cpu_forward_kernel(DType dtype) {
  constexpr int64_t kB = 1, kN = 20, kH = 2, kD = 40;
  std::vector<float> storage(static_cast<size_t>(kB * kN * kH * kD), 0.0f);
  ForwardArgs args;
  args.q = args.out = contiguous_view(storage.data(), dtype, {kB, kN, kH, kD});
  args.k = args.v = args.q;
  return selected_kernel(args);
}

/// Dense cases over every head dim of the brief: odd lengths from 1 to 300 (Nq != Nk), GQA, both
/// layouts, causal or not, with and without the lse.
void check_dense_sweep() {
  const int64_t dims[] = {32, 40, 64, 72, 80, 128, 160, 256};
  const int64_t lengths[] = {1, 15, 17, 77, 197, 300};
  int index = 0;
  for (const int64_t dim : dims) {
    for (int variant = 0; variant < 2; ++variant, ++index) {
      AttentionCase c;
      c.dtype = DType::bf16;
      c.batch = 2;
      c.seqlen_q = lengths[index % 6];
      c.seqlen_k = lengths[(index * 5 + 3) % 6];
      c.heads = variant == 0 ? 2 : 4;
      c.heads_kv = variant == 0 ? 2 : 1;
      c.head_dim = dim;
      c.causal = index % 3 == 1;
      c.layout = variant == 0 ? Layout::flash : Layout::torch;
      c.row_pad = index % 4 == 3 ? 8 : 0;
      c.with_lse = index % 5 != 4;
      check_forward(cpu_target(), c);
    }
  }
}

/// Varlen cases: empty sequences, a single row, lengths that end mid-tile, causal with Nq > Nk.
void check_varlen() {
  for (const bool causal : {false, true}) {
    AttentionCase c;
    c.dtype = DType::bf16;
    c.seqlens_q = {1, 0, 130, 41, 33};
    c.seqlens_k = {5, 3, 129, 0, 17};
    c.heads = 4;
    c.heads_kv = 2;
    c.head_dim = 72;
    c.causal = causal;
    check_forward(cpu_target(), c);
  }
}

TEST(CpuAmx, ForcedMatchesReference) {
  ScopedEnv env("FLASHVISION_CPU_AMX", "1");
  const std::string kernel = cpu_forward_kernel(DType::bf16);
  ASSERT_TRUE(kernel == "cpu-amx" || kernel == "cpu-amx-emulated") << kernel;
  check_dense_sweep();
  check_varlen();
}

TEST(CpuAmx, LongKeysAcrossBlocks) {
  // Several 256-key blocks (812 = 2 x 256 + a merged remainder of 300) and causal blocks partly
  // hidden, at one thread so that every task reuses the packed keys of the one before.
  ScopedEnv env("FLASHVISION_CPU_AMX", "1");
  for (const int threads : {1, 0}) {
    AttentionCase c;
    c.dtype = DType::bf16;
    c.batch = 1;
    c.seqlen_q = 333;
    c.seqlen_k = 812;
    c.heads = 3;
    c.heads_kv = 1;
    c.head_dim = 64;
    c.causal = threads == 1;
    c.num_threads = threads;
    check_forward(cpu_target(), c);
  }
}

TEST(CpuAmx, PackedKeysPastTheL2) {
  // One stream whose packed K/V (600 keys x D = 512, 1.2 MiB) passes what a core's L2 keeps, so
  // the forward asks 4 tasks a thread instead of 8 (amx_forward.cpp, kCachedPackBytes): one
  // thread takes 64-row blocks (where 8 tasks would have made them 32), a partial one last; 16
  // threads share 32-row blocks.
  ScopedEnv env("FLASHVISION_CPU_AMX", "1");
  for (const int threads : {1, 16}) {
    AttentionCase c = dense_case(DType::bf16, 200, 600, 512);
    c.batch = 1;
    c.heads = c.heads_kv = 1;
    c.num_threads = threads;
    check_forward(cpu_target(), c);
  }
}

TEST(CpuAmx, ForcedBlocksMatchReference) {
  // FLASHVISION_CPU_AMX_BLOCKS: one-tile blocks, blocks that split the sequences unevenly (a
  // query block of three tiles, merged remainders), key blocks of 256 (sd15-self-16's keys in
  // one), and blocks longer than every sequence; at one thread and at the default.
  ScopedEnv amx("FLASHVISION_CPU_AMX", "1");
  for (const char* blocks : {"16,32", "48,64", "32,256", "1024,1024"}) {
    SCOPED_TRACE(std::string("FLASHVISION_CPU_AMX_BLOCKS=") + blocks);
    ScopedEnv env("FLASHVISION_CPU_AMX_BLOCKS", blocks);
    for (const int threads : {1, 0}) {
      AttentionCase c = dense_case(DType::bf16, 300, 461, 64);
      c.heads = 3;
      c.heads_kv = 1;
      c.num_threads = threads;
      check_forward(cpu_target(), c);
    }
    check_varlen();
    AttentionCase wide = dense_case(DType::bf16, 70, 257, 160);
    wide.layout = Layout::torch;
    check_forward(cpu_target(), wide);
  }
}

TEST(CpuAmx, BadBlocksRejectedByName) {
  ScopedEnv amx("FLASHVISION_CPU_AMX", "1");
  const AttentionCase c = dense_case(DType::bf16, 20, 20, 16);
  for (const char* value :
       {"32", "20,32", "32,48", "0,32", "2048,64", "32,x", "32,2048", "32,64,"}) {
    SCOPED_TRACE(value);
    expect_env_value_rejected(cpu_target(), c, "FLASHVISION_CPU_AMX_BLOCKS", value);
  }
}

TEST(CpuAmx, LargeScoresStayFinite) {
  // Scores far above 1 make the running max move between blocks (700 keys: 256 + 256 + 188): O
  // is rescaled, P stays <= 2^8.
  ScopedEnv env("FLASHVISION_CPU_AMX", "1");
  AttentionCase c = dense_case(DType::bf16, 150, 700, 64);
  c.softmax_scale = 4.0f;
  check_forward(cpu_target(), c);
}

TEST(CpuAmx, NegativeScaleShiftsByTheSmallestScore) {
  // With a negative scale the largest scaled score comes from the smallest raw one: shifting by
  // the raw max instead would push P far past 2^8 (here past fp32's range: NaN or inf rows).
  ScopedEnv env("FLASHVISION_CPU_AMX", "1");
  AttentionCase c = dense_case(DType::bf16, 150, 300, 64);
  c.softmax_scale = -40.0f;
  check_forward(cpu_target(), c);
}

TEST(CpuAmx, NativeTiles) {
  if (cpu_forward_kernel(DType::bf16) != "cpu-amx") {
    GTEST_SKIP() << "no AMX-BF16 here (or not permitted): the forward keeps "
                 << cpu_forward_kernel(DType::bf16);
  }
  check_dense_sweep();
  check_varlen();
}

TEST(CpuAmx, DispatchByDtypeAndVariable) {
  const std::string fp32_kernel = kernel_name(Backend::cpu);
  EXPECT_EQ(cpu_forward_kernel(DType::f32), fp32_kernel);
  EXPECT_EQ(cpu_forward_kernel(DType::f16), fp32_kernel);
  {
    ScopedEnv env("FLASHVISION_CPU_AMX", "0");
    EXPECT_EQ(cpu_forward_kernel(DType::bf16), fp32_kernel);
  }
  {
    ScopedEnv env("FLASHVISION_CPU_AMX", "1");
    const std::string forced = cpu_forward_kernel(DType::bf16);
    EXPECT_TRUE(forced == "cpu-amx" || forced == "cpu-amx-emulated") << forced;
    EXPECT_EQ(cpu_forward_kernel(DType::f32), fp32_kernel);
    EXPECT_EQ(cpu_forward_kernel(DType::f16), fp32_kernel);
  }
  for (const char* automatic : {"", "auto"}) {
    ScopedEnv env("FLASHVISION_CPU_AMX", automatic);
    const std::string chosen = cpu_forward_kernel(DType::bf16);
    // Never the emulation by default: the real tiles or the fp32 forward.
    EXPECT_TRUE(chosen == "cpu-amx" || chosen == fp32_kernel) << chosen;
    ScopedEnv isa("FLASHVISION_CPU_ISA", "portable");
    EXPECT_EQ(cpu_forward_kernel(DType::bf16), "cpu-portable");
  }
}

TEST(CpuAmx, BadValueRejectedByName) {
  const AttentionCase c = dense_case(DType::bf16, 20, 20, 16);
  for (const char* value : {"2", "on", "yes", "AUTO", "1 "}) {
    SCOPED_TRACE(value);
    expect_env_value_rejected(cpu_target(), c, "FLASHVISION_CPU_AMX", value);
  }
  // f32 calls read the variable too: a typo is reported whatever the dtype.
  expect_env_value_rejected(cpu_target(), dense_case(DType::f32, 20, 20, 16), "FLASHVISION_CPU_AMX",
                            "true");
}

}  // namespace
}  // namespace flashvision::testing
