// The CUDA backend against the CPU backend on the same stored inputs (both run the library's own
// tiling; the float64 reference judges each separately elsewhere).
#include <gtest/gtest.h>

#include <random>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuVsCpu : public GpuKernelTest {};

void expect_same(const Target& target, AttentionCase c) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(c.describe() + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const CaseInputs inputs = draw_inputs(c, rng);
  AttentionRun gpu(target, c, inputs);
  AttentionRun cpu(cpu_target(), c, inputs);
  gpu.forward();
  cpu.forward();
  gpu.backward();
  cpu.backward();
  // Twice the reference tolerance: each side may be off by it in opposite directions.
  Tolerance tol = output_tolerance(c.dtype);
  tol.atol *= 2;
  tol.rtol *= 2;
  Tolerance lse_tol = lse_tolerance(c.dtype);
  lse_tol.atol *= 2;
  lse_tol.rtol *= 2;
  EXPECT_TRUE(matches_reference("out", gpu.read_out(), cpu.read_out().values, tol));
  EXPECT_TRUE(matches_reference("lse", gpu.read_lse(), cpu.read_lse().values, lse_tol));
  EXPECT_TRUE(matches_reference("dq", gpu.read_dq(), cpu.read_dq().values, tol));
  EXPECT_TRUE(matches_reference("dk", gpu.read_dk(), cpu.read_dk().values, tol));
  EXPECT_TRUE(matches_reference("dv", gpu.read_dv(), cpu.read_dv().values, tol));
}

TEST_P(GpuVsCpu, DenseGqaCausal) {
  AttentionCase c;
  c.dtype = dtype();
  c.batch = 2;
  c.seqlen_q = 197;
  c.seqlen_k = 260;
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = 80;
  c.causal = true;
  c.layout = Layout::torch;
  expect_same(target(), c);
}

TEST_P(GpuVsCpu, VarlenFull) {
  AttentionCase c;
  c.dtype = dtype();
  c.seqlens_q = {77, 0, 130, 1};
  c.seqlens_k = {77, 9, 64, 200};
  c.heads = c.heads_kv = 3;
  c.head_dim = 128;
  expect_same(target(), c);
}

TEST_P(GpuVsCpu, LongSequence) {
  AttentionCase c;
  c.dtype = dtype();
  c.batch = 1;
  c.seqlen_q = 1500;
  c.seqlen_k = 2100;
  c.heads = c.heads_kv = 1;
  c.head_dim = 64;
  expect_same(target(), c);
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuVsCpu, dtype_kernel_values(), dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
