// CPU backend controls: the thread count must not change results beyond rounding, a forced
// instruction set (FLASHVISION_CPU_ISA) and forced forward blocks (FLASHVISION_CPU_FWD_BLOCKS)
// must give correct results too, outputs large enough to be given huge pages stay exact, and the
// CUDA kernel override (FLASHVISION_CUDA_KERNEL) leaves CPU calls alone.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "attention_check.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

struct Outputs {
  TensorRead out, lse, dq, dk, dv;
};

Outputs run_with_threads(const AttentionCase& base, const CaseInputs& inputs, int threads) {
  AttentionCase c = base;
  c.num_threads = threads;
  AttentionRun run(cpu_target(), c, inputs);
  run.forward();
  run.backward();
  return {run.read_out(), run.read_lse(), run.read_dq(), run.read_dk(), run.read_dv()};
}

TEST(CpuThreads, OneThreadMatchesAllThreads) {
  AttentionCase c;
  c.batch = 2;
  c.seqlen_q = 300;
  c.seqlen_k = 260;
  c.heads = 3;
  c.heads_kv = 1;
  c.head_dim = 64;
  c.causal = true;
  const uint64_t seed = test_seed();
  SCOPED_TRACE(c.describe() + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const CaseInputs inputs = draw_inputs(c, rng);
  const Outputs single = run_with_threads(c, inputs, 1);
  const Outputs all = run_with_threads(c, inputs, 0);
  // Work may be split differently, so allow float32 reassociation, far below the reference bound.
  const Tolerance tight{1e-7, 1e-6};
  EXPECT_TRUE(matches_reference("out", all.out, single.out.values, tight));
  EXPECT_TRUE(matches_reference("lse", all.lse, single.lse.values, tight));
  EXPECT_TRUE(matches_reference("dq", all.dq, single.dq.values, tight));
  EXPECT_TRUE(matches_reference("dk", all.dk, single.dk.values, tight));
  EXPECT_TRUE(matches_reference("dv", all.dv, single.dv.values, tight));
  EXPECT_EQ(single.out.unwritten + single.dq.unwritten + single.dk.unwritten + single.dv.unwritten,
            0);
}

TEST(CpuThreads, SingleThreadMatchesReference) {
  for (const DType dtype : {DType::f32, DType::bf16}) {
    AttentionCase c;
    c.dtype = dtype;
    c.seqlens_q = {3, 200, 0, 41};
    c.seqlens_k = {9, 180, 4, 41};
    c.heads = 4;
    c.heads_kv = 2;
    c.head_dim = 72;
    c.causal = true;
    c.num_threads = 1;
    check_backward(cpu_target(), c);
  }
}

class ForcedIsa : public ::testing::TestWithParam<const char*> {};

TEST_P(ForcedIsa, MatchesReference) {
  const std::string isa = GetParam();
  ScopedEnv env("FLASHVISION_CPU_ISA", isa.c_str());
  std::string kernel;
  try {
    // A tiny call first: a backend that cannot honour the request throws here.
    AttentionCase probe;
    probe.head_dim = 8;
    std::mt19937_64 rng(1);
    AttentionRun run(cpu_target(), probe, draw_inputs(probe, rng));
    run.forward();
    kernel = kernel_name(Backend::cpu);
  } catch (const Error& e) {
    GTEST_SKIP() << "FLASHVISION_CPU_ISA=" << isa << " cannot be forced here: " << e.what();
  }
  if (kernel != "cpu-" + isa) {
    // The ISA is chosen once per process; a run of the whole binary in one process picks it
    // before this test sets the variable (ctest runs each test in its own process).
    GTEST_SKIP() << "FLASHVISION_CPU_ISA=" << isa << " not in effect (kernel " << kernel << ")";
  }
  for (const DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (const int64_t dim : {8, 72, 160}) {
      AttentionCase c;
      c.dtype = dtype;
      c.batch = 2;
      c.seqlen_q = 77;
      c.seqlen_k = 131;
      c.heads = 2;
      c.heads_kv = 1;
      c.head_dim = dim;
      c.causal = dim == 72;
      c.layout = dim == 160 ? Layout::torch : Layout::flash;
      check_backward(cpu_target(), c);
    }
  }
  AttentionCase v;
  v.seqlens_q = {1, 0, 130};
  v.seqlens_k = {5, 3, 129};
  v.heads = v.heads_kv = 2;
  v.head_dim = 40;
  v.causal = true;
  check_backward(cpu_target(), v);
}

TEST(CpuForwardBlocks, ForcedBlocksMatchReference) {
  // The smallest blocks, blocks that split the sequences unevenly, and blocks longer than them.
  for (const char* blocks : {"16,8", "48,24", "1024,1024"}) {
    SCOPED_TRACE(std::string("FLASHVISION_CPU_FWD_BLOCKS=") + blocks);
    ScopedEnv env("FLASHVISION_CPU_FWD_BLOCKS", blocks);
    AttentionCase c;
    c.seqlens_q = {1, 97, 0, 300};
    c.seqlens_k = {5, 40, 3, 333};
    c.heads = 4;
    c.heads_kv = 2;
    c.head_dim = 80;
    c.causal = true;
    check_forward(cpu_target(), c);
    AttentionCase dense = dense_case(DType::bf16, 130, 77, 40);
    dense.layout = Layout::torch;
    check_forward(cpu_target(), dense);
  }
}

TEST(CpuForwardBlocks, BadValueRejectedByName) {
  const AttentionCase c = dense_case(DType::f32, 20, 20, 16);
  for (const char* value : {"64", "20,8", "64,12", "0,8", "2048,64", "64,x", "-16,8", "64,64,"}) {
    SCOPED_TRACE(value);
    expect_env_value_rejected(cpu_target(), c, "FLASHVISION_CPU_FWD_BLOCKS", value);
  }
}

TEST(CpuHugePages, LargeOutputsMatchReference) {
  // out and dq of 20 MiB each: the range the pass asks huge pages for (src/cpu/huge_pages.h)
  // holds several whole 2 MiB pages, in both layouts.
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    AttentionCase c;
    c.batch = 1;
    c.seqlen_q = 41000;
    c.seqlen_k = 24;
    c.heads = 2;
    c.heads_kv = 1;
    c.head_dim = 64;
    c.layout = layout;
    check_backward(cpu_target(), c);
  }
}

TEST(CudaKernelVariable, LeavesCpuCallsAlone) {
  // It turns automatic calls on CUDA tensors into forced ones; CPU tensors never read it, so not
  // even a value it rejects stops them.
  for (const char* value : {"sm80", "sm90", "bad"}) {
    ScopedEnv env("FLASHVISION_CUDA_KERNEL", value);
    check_forward(cpu_target(), dense_case(DType::f32, 20, 30, 32));
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ForcedIsa, ::testing::Values("portable", "avx2", "avx512"),
                         [](const auto& point) { return std::string(point.param); });

}  // namespace
}  // namespace flashvision::testing
