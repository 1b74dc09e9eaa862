// Deterministic backward on the CUDA backend: dq, dk, dv bitwise equal across runs, and correct.
#include <gtest/gtest.h>

#include "attention_check.h"
#include "cuda_target.h"

namespace flashvision::testing {
namespace {

class GpuDeterministic : public GpuTest<> {};

TEST_F(GpuDeterministic, BackwardIsReproducibleAndMatchesReference) {
  // Two packed sequences, grouped heads, causal: several key-block CTAs add into each dQ row, the
  // order that deterministic mode fixes.
  AttentionCase c;
  c.dtype = DType::bf16;
  c.seqlens_q = {300, 300};
  c.seqlens_k = {257, 257};
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = 64;
  c.causal = true;
  c.deterministic = true;
  CheckOptions options;
  options.run_backward = run_backward_twice_expect_identical;
  check_backward(cuda_target(CudaKernel::sm80), c, options);
}

}  // namespace
}  // namespace flashvision::testing
