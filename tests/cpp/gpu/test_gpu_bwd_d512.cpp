// The sm80 backward of head-dim bucket 512 (head dims 264..512; tile_config.h: 32 keys x 64 query
// rows, one query slot, dQ in four passes of 128 columns) against the float64 reference. Only the
// Hopper forward serves these head dims, so the forward runs on sm90 and the backward is forced
// onto sm80. A build without bucket 512, or a GPU whose shared memory cannot hold the tile, must
// refuse that backward and say why; the sm80 forward refuses every head dim above 256.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda/sm80/tile_config.h"
#include "cuda_target.h"
#include "flashvision/flashvision.h"

namespace flashvision::testing {
namespace {

/// The sm90 forward (the only one of head dims above 256) and the sm80 backward, both forced.
Target sm90_forward_sm80_backward() {
  Target target = cuda_target(CudaKernel::sm90);
  target.name = "cuda-sm90/sm80";
  target.backward_backend = Backend::cuda_sm80;
  target.backward_fallback.reset();
  return target;
}

/// Base of the tests that run the bucket-512 backward, once per dtype: they need the bucket in
/// this build and the sm90 forward (a compute capability 9.0 GPU, whose shared memory holds the
/// backward's tile).
class GpuBwdHeadDim512 : public GpuSm90Test {
 protected:
  void SetUp() override {
#ifdef FLASHVISION_TEST_HEAD_DIM_512
    GpuSm90Test::SetUp();
#else
    GTEST_SKIP() << "this build did not compile head-dim bucket 512 (FLASHVISION_HEAD_DIMS)";
#endif
  }
  void check(const AttentionCase& c) const { check_backward(sm90_forward_sm80_backward(), c); }
};

TEST_P(GpuBwdHeadDim512, DenseBothLayoutsPartialBlocks) {
  // 200 queries (three full 64-row blocks and 8 rows) against 150 keys (four 32-key blocks and
  // 22), and the other way round; the torch layout with padded rows.
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{200, 150}, {150, 200}}) {
      AttentionCase c = dense_case(dtype(), nq, nk, 512);
      c.layout = layout;
      c.row_pad = layout == Layout::torch ? 8 : 0;
      check(c);
    }
  }
}

TEST_P(GpuBwdHeadDim512, HeadDimsPaddedIntoTheBucket) {
  // 264: the last three dQ passes hold padding only; 320 and 448: a pass partly; 504: 8 columns.
  for (const int64_t dim : {264, 320, 448, 504}) check(dense_case(dtype(), 130, 97, dim));
}

TEST_P(GpuBwdHeadDim512, GroupedQueriesCausal) {
  // Causal with more queries than keys (rows that see no key) and fewer; 4 query heads on 2 kv
  // heads, then 3 on 1.
  for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{150, 90}, {90, 150}}) {
    AttentionCase c = dense_case(dtype(), nq, nk, 512);
    c.heads = 4;
    c.heads_kv = 2;
    c.causal = true;
    check(c);
  }
  AttentionCase mqa = dense_case(dtype(), 77, 129, 512);
  mqa.heads = 3;
  mqa.heads_kv = 1;
  check(mqa);
}

TEST_P(GpuBwdHeadDim512, VarlenCausalGqa) {
  // A one-row sequence, an empty query sequence, causal rows that partly see nothing (64 queries,
  // 33 keys), and a sequence of several blocks.
  AttentionCase c;
  c.dtype = dtype();
  c.seqlens_q = {1, 5, 300, 0, 64, 7};
  c.seqlens_k = {1, 17, 300, 5, 33, 7};
  c.heads = 4;
  c.heads_kv = 2;
  c.head_dim = 504;
  c.causal = true;
  check(c);
}

TEST_P(GpuBwdHeadDim512, DeterministicIsReproducible) {
  AttentionCase c = dense_case(dtype(), 300, 257, 512);
  c.heads = 4;
  c.heads_kv = 2;
  c.causal = true;
  c.deterministic = true;
  CheckOptions options;
  options.run_backward = run_backward_twice_expect_identical;
  check_backward(sm90_forward_sm80_backward(), c, options);
}

TEST_P(GpuBwdHeadDim512, SmallGridSplitsTheQueryBlocks) {
  // 2 key blocks of one head: a grid this small splits its 16 query blocks over several CTAs,
  // whose fp32 partial dK, dV the reduce kernel sums.
  AttentionCase c = dense_case(dtype(), 1000, 40, 512);
  c.batch = 1;
  c.heads = c.heads_kv = 1;
  check(c);
}

TEST_P(GpuBwdHeadDim512, VaeShapeOnAutomaticDispatch) {
  // The VAE mid-block's single head on a 24 x 24 latent, both passes on automatic dispatch:
  // the Hopper forward, then the sm80 backward (the Hopper backward stops at 128).
  AttentionCase c = dense_case(dtype(), 576, 576, 512);
  c.batch = 1;
  c.heads = c.heads_kv = 1;
  Target automatic = cuda_target(CudaKernel::sm90);
  automatic.backend = automatic.backward_backend = Backend::automatic;
  automatic.backward_fallback.reset();
  std::mt19937_64 rng(test_seed());
  AttentionRun run(automatic, c, draw_inputs(c, rng));
  EXPECT_EQ(run.selected_backward_backend(), Backend::cuda_sm80);
  check_backward(automatic, c);
}

TEST_P(GpuBwdHeadDim512, ForcedSm90BackwardSaysItStopsAt128) {
  Target target = cuda_target(CudaKernel::sm90);
  target.backward_fallback.reset();
  const AttentionCase c = dense_case(dtype(), 8, 8, 512);
  std::mt19937_64 rng(test_seed());
  AttentionRun run(target, c, draw_inputs(c, rng));
  try {
    run.selected_backward_backend();
    ADD_FAILURE() << "the sm90 backward accepted head dim 512";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the sm90 backward serves head dims up to 128, got "
                                         "head_dim 512"),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuBwdHeadDim512, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

class GpuHeadDim512Errors : public GpuTest<> {};

/// The message of selecting the backend of `c`'s forward (backward: its backward) forced onto
/// sm80, or "" when the sm80 path accepts it.
std::string sm80_refusal(const AttentionCase& c, bool backward) {
  std::mt19937_64 rng(test_seed());
  AttentionRun run(cuda_target(CudaKernel::sm80), c, draw_inputs(c, rng));
  try {
    if (backward) {
      run.selected_backward_backend();
    } else {
      run.forward();
    }
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST_F(GpuHeadDim512Errors, Sm80ForwardStopsAt256) {
  for (const int64_t dim : {264, 512}) {
    const std::string what = sm80_refusal(dense_case(DType::bf16, 8, 8, dim), false);
    EXPECT_NE(what.find("the sm80 forward needs a head dim that is a multiple of 8 up to 256, "
                        "got " +
                        std::to_string(dim)),
              std::string::npos)
        << what;
  }
}

TEST_F(GpuHeadDim512Errors, Sm80BackwardRefusedWhereItCannotRun) {
  const std::string what = sm80_refusal(dense_case(DType::bf16, 8, 8, 512), true);
#ifndef FLASHVISION_TEST_HEAD_DIM_512
  EXPECT_NE(what.find("head dim 512 needs bucket 512, which this build did not compile"),
            std::string::npos)
      << what;
#else
  int optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  if (static_cast<std::size_t>(optin) >= detail::sm80::bwd_smem_bytes(512)) {
    EXPECT_EQ(what, "");
    GTEST_SKIP() << "GPU 0 holds the bucket-512 backward tile: only the refusal on smaller GPUs "
                    "and builds without the bucket is left to check";
  }
  EXPECT_NE(what.find("the sm80 backward of head dim bucket 512 needs 204 KiB of shared memory "
                      "per block, device 0 allows " +
                      std::to_string(optin / 1024) + " KiB"),
            std::string::npos)
      << what;
#endif
}

}  // namespace
}  // namespace flashvision::testing
