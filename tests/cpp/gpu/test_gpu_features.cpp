// Options and layouts on the CUDA backend: GQA/MQA, varlen (with empty sequences), causal
// alignment, layouts, padded strides, softmax scale, scores that move the row max across key
// blocks, lse absent, grids past 65,535 heads, and the errors for what the sm80 path does not
// serve. GpuSanitize.* is the small subset run under compute-sanitizer (memcheck, racecheck).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "attention_check.h"
#include "cuda_target.h"
#include "flashvision/flashvision.h"
#include "scoped_env.h"
#include "score_ramps.h"

namespace flashvision::testing {
namespace {

/// Varlen lengths with a single-row sequence, one long sequence, an empty query sequence, and a
/// sequence whose causal rows partly see nothing (64 queries, 33 keys).
AttentionCase varlen(DType dtype, int64_t heads, int64_t heads_kv, bool causal, int64_t dim) {
  AttentionCase c;
  c.dtype = dtype;
  c.seqlens_q = {1, 5, 300, 0, 64, 7};
  c.seqlens_k = {1, 17, 300, 5, 33, 7};
  c.heads = heads;
  c.heads_kv = heads_kv;
  c.head_dim = dim;
  c.causal = causal;
  return c;
}

class GpuFeatures : public GpuKernelTest {};

TEST_P(GpuFeatures, GroupedQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense_case(dtype(), 61, 150, 64);
    c.heads = 4;
    c.heads_kv = 2;
    c.causal = causal;
    check_backward(target(), c);
  }
}

TEST_P(GpuFeatures, MultiQueryAttention) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense_case(dtype(), 150, 61, 128);
    c.heads = 6;
    c.heads_kv = 1;
    c.causal = causal;
    check_backward(target(), c);
  }
}

TEST_P(GpuFeatures, Varlen) {
  for (const int64_t dim : {40, 64, 128})
    check_backward(target(), varlen(dtype(), 2, 2, false, dim));
}

TEST_P(GpuFeatures, VarlenCausalGqa) {
  for (const int64_t dim : {72, 256}) check_backward(target(), varlen(dtype(), 4, 2, true, dim));
}

TEST_P(GpuFeatures, VarlenMqaTorchLayoutPadded) {
  AttentionCase c = varlen(dtype(), 4, 1, true, 80);
  c.layout = Layout::torch;
  c.row_pad = 8;
  check_backward(target(), c);
}

TEST_P(GpuFeatures, VarlenQueriesWithoutKeys) {
  AttentionCase c;
  c.dtype = dtype();
  c.seqlens_q = {4, 9, 3};
  c.seqlens_k = {6, 0, 2};
  c.heads = c.heads_kv = 2;
  c.head_dim = 64;
  check_backward(target(), c);
}

TEST_P(GpuFeatures, CausalAlignment) {
  for (const auto& [nq, nk] :
       {std::pair<int64_t, int64_t>{50, 130}, {111, 111}, {130, 50}, {300, 1}, {1, 300}}) {
    AttentionCase c = dense_case(dtype(), nq, nk, 64);
    c.causal = true;
    check_backward(target(), c);
  }
}

TEST_P(GpuFeatures, LayoutsAndPaddedStrides) {
  for (const Layout layout : {Layout::flash, Layout::torch}) {
    for (const int64_t pad : {0, 8, 24}) {
      AttentionCase c = dense_case(dtype(), 100, 120, 72);
      c.layout = layout;
      c.row_pad = pad;
      c.causal = pad == 8;
      check_backward(target(), c);
    }
  }
}

TEST_P(GpuFeatures, SoftmaxScale) {
  // -6: the largest scaled score is the smallest raw one, and the rows' spread of raw scores
  // (about 26 here) times 6 log2(e) passes float32's range, so a forward that shifted by the raw
  // max would overflow (cuda_backend.cpp's with_positive_scale).
  for (const float scale : {0.3f, 1.7f, -6.0f}) {
    AttentionCase c = dense_case(dtype(), 65, 80, 32);
    c.softmax_scale = scale;
    check_backward(target(), c);
  }
}

TEST_P(GpuFeatures, ScoresRisingFarOverKeyBlocks) {
  // The forwards take exponents against a max that moves only past a slack where O's rows are
  // long (and the Hopper forward, after a row's first key block, against its max as it stands:
  // stale_max_softmax.cuh); random scores never pass it after a row's first block, so the ramps
  // move it on purpose. At a ramp of 2000 a block's exponentials against the previous max
  // overflow to infinity, and the max must be found again from the exponents kept. Other tiles
  // and key widths: test_gpu_sm90_wide_tiles.cpp, test_gpu_sm90_key_blocks.cpp.
  for (const int64_t dim : {64, 128, 256}) {
    check_forward_with_ramps(target(), dense_case(dtype(), 130, 1000, dim));
  }
}

TEST_P(GpuFeatures, SmallHeadDims) {
  for (const int64_t dim : {8, 16, 24, 48, 56, 112, 136, 192, 200, 248}) {
    check_backward(target(), dense_case(dtype(), 67, 93, dim));
  }
}

TEST_P(GpuFeatures, ForwardWithoutLse) {
  for (const bool causal : {false, true}) {
    AttentionCase c = dense_case(dtype(), 90, 70, 96);
    c.causal = causal;
    c.with_lse = false;
    check_forward(target(), c);
  }
}

TEST_P(GpuFeatures, ManyHeadsGrid) {
  // batch x heads past 65,535: the grid folds them into x.
  AttentionCase c = dense_case(dtype(), 3, 5, 32);
  c.batch = 300;
  c.heads = c.heads_kv = 224;
  check_backward(target(), c);
}

TEST_P(GpuFeatures, AutomaticBackendPicksCuda) {
  Target automatic = target();
  automatic.backend = automatic.backward_backend = Backend::automatic;
  check_backward(automatic, dense_case(dtype(), 33, 45, 64));
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuFeatures, dtype_kernel_values(), dtype_kernel_name);

class GpuErrors : public GpuTest<> {};

/// Runs forward and returns the error message (empty when it did not throw).
std::string forward_error(const AttentionCase& c) {
  std::mt19937_64 rng(test_seed());
  AttentionRun run(cuda_target(), c, draw_inputs(c, rng));
  try {
    run.forward();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(GpuErrors, Float32IsRejectedByName) {
  const std::string what = forward_error(dense_case(DType::f32, 8, 8, 64));
  EXPECT_NE(what.find("f16 and bf16"), std::string::npos) << what;
}

TEST_F(GpuErrors, HeadDimAbove256IsRejected) {
  const std::string what = forward_error(dense_case(DType::bf16, 8, 8, 264));
  EXPECT_NE(what.find("256"), std::string::npos) << what;
}

TEST_F(GpuErrors, UnalignedStridesAreRejected) {
  AttentionCase c = dense_case(DType::bf16, 8, 8, 64);
  c.row_pad = 3;
  const std::string what = forward_error(c);
  EXPECT_NE(what.find("multiples of 8"), std::string::npos) << what;
}

/// The Hopper-specific choices: automatic dispatch, and errors when sm90 is forced where it does
/// not apply.
class GpuSm90Dispatch : public GpuTest<> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(CudaKernel::sm90);
    if (!why.empty()) GTEST_SKIP() << why;
  }

  /// Forward arguments over cudaMalloc'ed [1, 16, 2, dim] tensors of `dtype`.
  ForwardArgs args(DType dtype, int64_t dim) {
    const std::size_t bytes = 16 * 2 * dim * 4;
    for (void*& buffer : buffers_) {
      if (cudaMalloc(&buffer, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc");
    }
    ForwardArgs a;
    a.q = contiguous_view(buffers_[0], dtype, {1, 16, 2, dim}, Device::cuda);
    a.k = contiguous_view(buffers_[1], dtype, {1, 16, 2, dim}, Device::cuda);
    a.v = contiguous_view(buffers_[2], dtype, {1, 16, 2, dim}, Device::cuda);
    a.out = contiguous_view(buffers_[3], dtype, {1, 16, 2, dim}, Device::cuda);
    return a;
  }

  /// Frees the buffers (also between the head dims of one test).
  void TearDown() override {
    for (void*& buffer : buffers_) {
      cudaFree(buffer);
      buffer = nullptr;
    }
  }

 private:
  void* buffers_[4] = {};
};

TEST_F(GpuSm90Dispatch, AutomaticForwardPicksSm90) {
  int checked = 0;
  for (const int64_t dim : {40, 64, 80, 128, 160, 256}) {
    try {
      EXPECT_EQ(selected_backend(args(DType::bf16, dim)), Backend::cuda_sm90) << "head dim " << dim;
      ++checked;
    } catch (const Error& e) {
      // A build restricted with FLASHVISION_HEAD_DIMS lacks some buckets: a build choice.
      if (std::string(e.what()).find("which this build did not compile") == std::string::npos) {
        ADD_FAILURE() << "head dim " << dim << ": " << e.what();
      }
    }
    TearDown();
  }
  if (checked == 0) GTEST_SKIP() << "this build compiled none of the checked head-dim buckets";
}

TEST_F(GpuSm90Dispatch, AutomaticForwardOfHeadDim512) {
#ifdef FLASHVISION_TEST_HEAD_DIM_512
  EXPECT_EQ(selected_backend(args(DType::bf16, 512)), Backend::cuda_sm90);
#else
  // Without the bucket the error must say so, not only that the portable path stops at 256.
  try {
    selected_backend(args(DType::bf16, 512));
    ADD_FAILURE() << "head dim 512 without its bucket did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the Hopper forward: head dim 512 needs bucket 512, which "
                                         "this build did not compile"),
              std::string::npos)
        << e.what();
  }
#endif
}

TEST_F(GpuSm90Dispatch, HeadDimsAbove256RunInValueHalves) {
  // The VAE's single 512-wide head, and a width whose second half is partly padding.
  for (const int64_t dim : {512, 320}) {
    AttentionCase c = dense_case(DType::bf16, 150, 133, dim);
    c.heads = c.heads_kv = 1;
    check_forward(cuda_target(CudaKernel::sm90), c);
  }
  AttentionCase c = dense_case(DType::f16, 77, 300, 512);
  c.causal = true;
  c.layout = Layout::torch;
  check_forward(cuda_target(CudaKernel::sm90), c);
}

TEST_F(GpuSm90Dispatch, HeadDimsAbove256SplitTheLastWaveOfEachHalf) {
#ifndef FLASHVISION_TEST_HEAD_DIM_512
  GTEST_SKIP() << "this build did not compile head-dim bucket 512 (FLASHVISION_HEAD_DIMS)";
#else
  // The tiles of both 256-column halves split over the keys, and the combine writes each half's
  // columns of O (and the LSE once): the model's choice (which splits these single heads: a few
  // query tiles for 132 SMs) and forced part counts, on the VAE's width and on one whose second
  // half is partly padding; keys that end inside a block, and a query tile with rows for one
  // consumer.
  for (const char* parts : {"auto", "2", "3", "8"}) {
    ScopedEnv env("FLASHVISION_SM90_FWD_SPLIT", parts);
    SCOPED_TRACE(std::string("FLASHVISION_SM90_FWD_SPLIT=") + parts);
    for (const int64_t dim : {512, 320}) {
      for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{200, 1000}, {50, 2100}}) {
        AttentionCase c = dense_case(DType::bf16, nq, nk, dim);
        c.heads = c.heads_kv = 1;
        check_forward(cuda_target(CudaKernel::sm90), c);
      }
    }
    AttentionCase c = dense_case(DType::f16, 300, 777, 512);
    c.heads = 2;
    c.heads_kv = 1;
    c.layout = Layout::torch;
    c.with_lse = false;
    check_forward(cuda_target(CudaKernel::sm90), c);
  }
#endif
}

TEST_F(GpuSm90Dispatch, KernelVariableForcesAutomaticCalls) {
  // FLASHVISION_CUDA_KERNEL decides what automatic calls (the only kind the Python package makes)
  // run; an explicit backend ignores it.
  const auto selected = [&](const char* value, DType dtype, Backend requested) {
    ScopedEnv env("FLASHVISION_CUDA_KERNEL", value);
    ForwardArgs a = args(dtype, 64);
    a.backend = requested;
    try {
      const Backend b = selected_backend(a);
      TearDown();
      return std::string(to_string(b));
    } catch (const Error& e) {
      TearDown();
      return std::string(e.what());
    }
  };
  const std::string automatic = selected("auto", DType::bf16, Backend::automatic);
  if (automatic.find("which this build did not compile") != std::string::npos) {
    GTEST_SKIP() << automatic;
  }
  EXPECT_EQ(automatic, "cuda-sm90");
  EXPECT_EQ(selected("sm80", DType::bf16, Backend::automatic), "cuda-sm80");
  EXPECT_EQ(selected("sm90", DType::bf16, Backend::automatic), "cuda-sm90");
  EXPECT_EQ(selected("sm80", DType::bf16, Backend::cuda_sm90), "cuda-sm90");
  const std::string f32 = selected("sm90", DType::f32, Backend::automatic);
  EXPECT_NE(f32.find("FLASHVISION_CUDA_KERNEL asks for cuda-sm90 but the sm90 forward supports "
                     "f16 and bf16"),
            std::string::npos)
      << f32;
  const std::string bad = selected("sm75", DType::bf16, Backend::automatic);
  EXPECT_NE(bad.find("FLASHVISION_CUDA_KERNEL is \"sm75\", expected auto, sm80 or sm90"),
            std::string::npos)
      << bad;
}

TEST_F(GpuSm90Dispatch, ForcedSm90RejectsFloat32) {
  ForwardArgs a = args(DType::f32, 64);
  a.backend = Backend::cuda_sm90;
  try {
    forward(a);
    ADD_FAILURE() << "forward with f32 on sm90 did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backend is cuda-sm90 but the sm90 forward supports f16 "
                                         "and bf16"),
              std::string::npos)
        << e.what();
  }
}

/// The message of the forward and backward of `c` forced onto sm90 (no fallback), or "" when
/// both ran.
std::string forced_sm90_backward_error(const AttentionCase& c) {
  Target target = cuda_target(CudaKernel::sm90);
  target.backward_fallback.reset();
  std::mt19937_64 rng(test_seed());
  AttentionRun run(target, c, draw_inputs(c, rng));
  try {
    run.forward();
    run.backward();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST_F(GpuSm90Dispatch, ForcedSm90BackwardRejectsWhatItDoesNotServe) {
  // Head dim 136 (bucket 160) when the build has the bucket at all; a build restricted with
  // FLASHVISION_HEAD_DIMS refuses it earlier, for every kernel.
  const std::string wide = forced_sm90_backward_error(dense_case(DType::bf16, 8, 8, 136));
  if (wide.find("which this build did not compile") == std::string::npos) {
    EXPECT_NE(wide.find("backend is cuda-sm90 but the sm90 backward serves head dims up to 128, "
                        "got head_dim 136"),
              std::string::npos)
        << wide;
  }
  AttentionCase deterministic = dense_case(DType::bf16, 8, 8, 64);
  deterministic.deterministic = true;
  EXPECT_NE(forced_sm90_backward_error(deterministic).find("no deterministic mode"),
            std::string::npos);
}

/// Small, fast cases for compute-sanitizer: every kernel, masks, varlen and GQA.
class GpuSanitize : public ::testing::TestWithParam<CudaKernel> {
 protected:
  void SetUp() override {
    const std::string why = kernel_unavailable(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(GpuSanitize, DenseCausalGqa) {
  AttentionCase c = dense_case(DType::bf16, 130, 77, 64);
  c.heads = 4;
  c.causal = true;
  check_backward(cuda_target(GetParam()), c);
}

TEST_P(GpuSanitize, VarlenTorchLayout) {
  AttentionCase c = varlen(DType::f16, 2, 1, true, 80);
  c.layout = Layout::torch;
  check_backward(cuda_target(GetParam()), c);
}

/// The Hopper backward's staged dQ (bucket 128): partial query blocks of several sequences, and
/// a head dim short of the bucket, whose last staging box the reduce-add clips.
TEST_P(GpuSanitize, VarlenStagedDq) {
  check_backward(cuda_target(GetParam()), varlen(DType::bf16, 2, 2, false, 120));
}

TEST_P(GpuSanitize, LargeHeadDim) {
  check_backward(cuda_target(GetParam()), dense_case(DType::bf16, 70, 140, 256));
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSanitize, ::testing::Values(CudaKernel::sm80, CudaKernel::sm90),
                         [](const auto& point) { return std::string(to_string(point.param)); });

}  // namespace
}  // namespace flashvision::testing
