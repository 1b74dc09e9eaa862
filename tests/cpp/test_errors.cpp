// Every documented argument error is raised, before any work, with a message that names it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "api/cuda_refusal.h"
#include "flashvision/flashvision.h"

namespace fv = flashvision;

namespace {

constexpr int64_t kB = 2, kN = 5, kH = 4, kHkv = 2, kD = 8;

/// Asserts that `call` throws flashvision::Error whose message contains `expected`.
void expect_error(const std::function<void()>& call, const std::string& expected) {
  try {
    call();
  } catch (const fv::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("flashvision: ", 0), 0u) << what;
    EXPECT_NE(what.find(expected), std::string::npos)
        << "message: " << what << "\nexpected to contain: " << expected;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-flashvision exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "no error raised; expected: " << expected;
}

/// Small valid dense problem in host memory; each test breaks one thing.
class ArgumentErrors : public ::testing::Test {
 protected:
  std::vector<float> q_, k_, v_, out_, lse_, dout_, dq_, dk_, dv_;
  fv::ForwardArgs fwd_;
  fv::BackwardArgs bwd_;

  void SetUp() override {
    const auto q_elems = static_cast<size_t>(kB * kN * kH * kD);
    const auto k_elems = static_cast<size_t>(kB * kN * kHkv * kD);
    for (auto* buf : {&q_, &out_, &dout_, &dq_}) buf->assign(q_elems, 0.5f);
    for (auto* buf : {&k_, &v_, &dk_, &dv_}) buf->assign(k_elems, 0.25f);
    lse_.assign(static_cast<size_t>(kB * kH * kN), 0.0f);
    fwd_.q = fv::contiguous_view(q_.data(), fv::DType::f32, {kB, kN, kH, kD});
    fwd_.k = fv::contiguous_view(k_.data(), fv::DType::f32, {kB, kN, kHkv, kD});
    fwd_.v = fv::contiguous_view(v_.data(), fv::DType::f32, {kB, kN, kHkv, kD});
    fwd_.out = fv::contiguous_view(out_.data(), fv::DType::f32, {kB, kN, kH, kD});
    fwd_.lse = fv::contiguous_view(lse_.data(), fv::DType::f32, {kB, kH, kN});
    static_cast<fv::AttentionOptions&>(bwd_) = fwd_;
    bwd_.q = fwd_.q;
    bwd_.k = fwd_.k;
    bwd_.v = fwd_.v;
    bwd_.out = fwd_.out;
    bwd_.lse = fwd_.lse;
    bwd_.dout = fv::contiguous_view(dout_.data(), fv::DType::f32, {kB, kN, kH, kD});
    bwd_.dq = fv::contiguous_view(dq_.data(), fv::DType::f32, {kB, kN, kH, kD});
    bwd_.dk = fv::contiguous_view(dk_.data(), fv::DType::f32, {kB, kN, kHkv, kD});
    bwd_.dv = fv::contiguous_view(dv_.data(), fv::DType::f32, {kB, kN, kHkv, kD});
  }

  void forward_fails(const std::string& expected) {
    expect_error([&] { fv::forward(fwd_); }, expected);
  }
  void backward_fails(const std::string& expected) {
    expect_error([&] { fv::backward(bwd_); }, expected);
  }
};

TEST_F(ArgumentErrors, ValidArgumentsRun) {
  EXPECT_NO_THROW(fv::forward(fwd_));
  EXPECT_NO_THROW(fv::backward(bwd_));
}

TEST_F(ArgumentErrors, NullData) {
  fwd_.q.data = nullptr;
  forward_fails("q.data is null");
}

TEST_F(ArgumentErrors, MissingOutput) {
  fwd_.out = fv::TensorView{};
  forward_fails("out.data is null");
}

TEST_F(ArgumentErrors, WrongRank) {
  fwd_.k = fv::contiguous_view(k_.data(), fv::DType::f32, {kB * kN, kHkv, kD});
  forward_fails("k has rank 3, expected 4 (batch, seqlen_k, kv heads, head dim)");
}

TEST_F(ArgumentErrors, HeadDimMismatch) {
  fwd_.k.shape[3] = 4;
  forward_fails("k.shape[3] (head dim) is 4 but q has 8");
}

TEST_F(ArgumentErrors, ValueShapeMismatch) {
  fwd_.v.shape[1] = kN - 1;
  forward_fails("v.shape[1] (seqlen_k) is 4 but k has 5");
}

TEST_F(ArgumentErrors, BatchMismatch) {
  fwd_.k.shape[0] = 1;
  fwd_.v.shape[0] = 1;
  forward_fails("k.shape[0] (batch) is 1 but q has 2");
}

TEST_F(ArgumentErrors, OutputShapeMismatch) {
  fwd_.out.shape[2] = kHkv;
  forward_fails("out.shape[2] (heads) is 2 but q has 4");
}

TEST_F(ArgumentErrors, DtypeMismatch) {
  fwd_.v.dtype = fv::DType::bf16;
  forward_fails("v.dtype is bf16 but q has f32");
}

TEST_F(ArgumentErrors, UnsupportedDtype) {
  for (auto* t : {&fwd_.q, &fwd_.k, &fwd_.v, &fwd_.out}) t->dtype = fv::DType::i32;
  forward_fails("q.dtype is i32, expected f32, f16, bf16 or f8e4m3");
}

/// Makes the forward's inputs e4m3 (out bf16): a valid FP8 call.
void make_fp8(fv::ForwardArgs& args) {
  for (auto* t : {&args.q, &args.k, &args.v}) t->dtype = fv::DType::f8e4m3;
  args.out.dtype = fv::DType::bf16;
}

TEST_F(ArgumentErrors, Fp8HasNoBackward) {
  for (auto* t : {&bwd_.q, &bwd_.k, &bwd_.v}) t->dtype = fv::DType::f8e4m3;
  backward_fails("q.dtype is f8e4m3, which the forward takes only");
}

TEST_F(ArgumentErrors, Fp8OutputIsBf16) {
  make_fp8(fwd_);
  fwd_.out.dtype = fv::DType::f8e4m3;
  forward_fails("out.dtype is f8e4m3 but f8e4m3 inputs need bf16");
}

TEST_F(ArgumentErrors, Fp8Descales) {
  fwd_.descale_k = 0.5f;
  forward_fails("descale_k is 0.500000 but q.dtype is f32; descales apply to f8e4m3 inputs only");
  make_fp8(fwd_);
  fwd_.descale_k = 1.0f;
  fwd_.descale_v = 0.0f;
  forward_fails("descale_v is 0.000000, expected a finite number > 0");
  fwd_.descale_v = std::numeric_limits<float>::infinity();
  forward_fails("descale_v is inf, expected a finite number > 0");
}

TEST_F(ArgumentErrors, Fp8NegativeScale) {
  make_fp8(fwd_);
  fwd_.softmax_scale = -0.5f;
  forward_fails("softmax_scale is -0.500000 with f8e4m3 inputs, expected a number >= 0");
}

TEST_F(ArgumentErrors, HeadDimOutOfRange) {
  std::vector<float> big(static_cast<size_t>(kB * kN * kH * 520), 1.0f);
  for (auto* t : {&fwd_.q, &fwd_.out})
    *t = fv::contiguous_view(big.data(), fv::DType::f32, {kB, kN, kH, 520});
  for (auto* t : {&fwd_.k, &fwd_.v})
    *t = fv::contiguous_view(big.data(), fv::DType::f32, {kB, kN, kHkv, 520});
  forward_fails("q.shape[3] (head dim) is 520, expected 1 to 512");
}

TEST_F(ArgumentErrors, ZeroLengthSequence) {
  fwd_.q.shape[1] = 0;
  forward_fails("q.shape[1] (seqlen_q) is 0, expected >= 1");
}

TEST_F(ArgumentErrors, GqaNotDivisible) {
  for (auto* t : {&fwd_.k, &fwd_.v}) t->shape[2] = 3;
  forward_fails(
      "k.shape[2] (kv heads) is 3 but q has 4 heads; expected the query heads to be a "
      "multiple of the kv heads");
}

TEST_F(ArgumentErrors, NonContiguousLastDim) {
  fwd_.q.stride[3] = 2;
  forward_fails("q.stride[3] is 2, expected 1 (the last dimension must be contiguous)");
}

TEST_F(ArgumentErrors, NegativeStride) {
  fwd_.k.stride[1] = -kHkv * kD;
  forward_fails("k.stride[1] is -16, expected >= 0");
}

TEST_F(ArgumentErrors, DeviceMismatch) {
  fwd_.k.device = fv::Device::cuda;
  forward_fails("k is on cuda:0 but q is on cpu; expected every tensor on one device");
}

TEST_F(ArgumentErrors, SizeOverflow) {
  fwd_.q.shape[0] = int64_t{1} << 40;
  fwd_.q.stride[0] = int64_t{1} << 40;
  forward_fails("q's extent overflows int64");
}

TEST_F(ArgumentErrors, ProblemSizeOverflow) {
  // Broadcast strides (0) keep each tensor's extent small while the work overflows.
  for (auto* t : {&fwd_.q, &fwd_.out, &fwd_.k, &fwd_.v}) {
    t->shape[1] = int64_t{1} << 31;
    t->stride[1] = 0;
  }
  forward_fails("overflows int64");
}

TEST_F(ArgumentErrors, NonFiniteScale) {
  fwd_.softmax_scale = std::numeric_limits<float>::quiet_NaN();
  forward_fails("softmax_scale is nan, expected a finite number");
}

TEST_F(ArgumentErrors, NegativeThreads) {
  fwd_.num_threads = -1;
  forward_fails("num_threads is -1, expected >= 0");
}

TEST_F(ArgumentErrors, LseDtype) {
  fwd_.lse.dtype = fv::DType::f16;
  forward_fails("lse.dtype is f16 but lse must be f32");
}

TEST_F(ArgumentErrors, LseShape) {
  fwd_.lse.shape[2] = kN + 1;
  forward_fails("lse.shape[2] (seqlen_q) is 6 but q has seqlen_q 5");
}

TEST_F(ArgumentErrors, ForcedBackendDoesNotMatchDevice) {
  fwd_.backend = fv::Backend::cuda_sm80;
  forward_fails("backend is cuda-sm80 but the tensors are on cpu");
}

TEST_F(ArgumentErrors, CudaTensorsWithoutCudaBackend) {
  for (fv::Backend b : fv::compiled_backends()) {
    if (b != fv::Backend::cpu) GTEST_SKIP() << "this build has a CUDA backend";
  }
  for (auto* t : {&fwd_.q, &fwd_.k, &fwd_.v, &fwd_.out, &fwd_.lse}) t->device = fv::Device::cuda;
  forward_fails("this build of flashvision has no CUDA backend");
}

TEST_F(ArgumentErrors, BackwardNeedsLse) {
  bwd_.lse = fv::TensorView{};
  backward_fails("lse is missing; backward needs the lse the forward call wrote");
}

TEST_F(ArgumentErrors, BackwardGradientShape) {
  bwd_.dk.shape[2] = kH;
  backward_fails("dk.shape[2] (kv heads) is 4 but k has 2");
}

TEST_F(ArgumentErrors, BackwardGradientDtype) {
  bwd_.dout.dtype = fv::DType::bf16;
  backward_fails("dout.dtype is bf16 but q has f32");
}

TEST_F(ArgumentErrors, BackwardWorkspaceAlignment) {
  alignas(256) static unsigned char scratch[512];
  bwd_.workspace = scratch + 16;
  bwd_.workspace_bytes = 256;
  backward_fails("workspace is not 256-byte aligned");
  bwd_.workspace = scratch;
  EXPECT_NO_THROW(fv::backward(bwd_));
}

TEST_F(ArgumentErrors, BackwardWorkspaceSizeOnCpuIsZero) {
  EXPECT_EQ(fv::backward_workspace_size(bwd_), 0u);
  bwd_.dk.shape[2] = kH;  // the size query validates as backward() does
  expect_error([&] { fv::backward_workspace_size(bwd_); },
               "dk.shape[2] (kv heads) is 4 but k has 2");
}

/// Varlen problem with 3 sequences of lengths {2, 0, 3} packed into 5 rows.
class VarlenErrors : public ArgumentErrors {
 protected:
  std::vector<int32_t> cu_q_{0, 2, 2, 5}, cu_k_{0, 1, 3, 5};

  void SetUp() override {
    ArgumentErrors::SetUp();
    const int64_t total = 5;
    fwd_.q = fv::contiguous_view(q_.data(), fv::DType::f32, {total, kH, kD});
    fwd_.out = fv::contiguous_view(out_.data(), fv::DType::f32, {total, kH, kD});
    fwd_.k = fv::contiguous_view(k_.data(), fv::DType::f32, {total, kHkv, kD});
    fwd_.v = fv::contiguous_view(v_.data(), fv::DType::f32, {total, kHkv, kD});
    fwd_.lse = fv::contiguous_view(lse_.data(), fv::DType::f32, {kH, total});
    fwd_.cu_seqlens_q = fv::contiguous_view(cu_q_.data(), fv::DType::i32, {4});
    fwd_.cu_seqlens_k = fv::contiguous_view(cu_k_.data(), fv::DType::i32, {4});
  }
};

TEST_F(VarlenErrors, ValidArgumentsRun) { EXPECT_NO_THROW(fv::forward(fwd_)); }

TEST_F(VarlenErrors, EmptyTensorsMayHaveNullData) {
  // Every sequence empty: q, k, v, out and lse have no elements and, as PyTorch makes them, no
  // storage; the call is valid and does nothing.
  cu_q_ = {0, 0, 0, 0};
  cu_k_ = {0, 0, 0, 0};
  for (auto* t : {&fwd_.q, &fwd_.k, &fwd_.v, &fwd_.out, &fwd_.lse}) t->data = nullptr;
  for (auto* t : {&fwd_.q, &fwd_.k, &fwd_.v, &fwd_.out}) t->shape[0] = 0;
  fwd_.lse.shape[1] = 0;
  EXPECT_NO_THROW(fv::forward(fwd_));
  fwd_.k.shape[0] = 5;  // rows but no storage: still an error
  forward_fails("k.data is null");
}

TEST_F(VarlenErrors, Fp8IsDenseOnly) {
  make_fp8(fwd_);
  forward_fails("q.dtype is f8e4m3, which the forward takes in dense mode only (no cu_seqlens)");
}

TEST_F(VarlenErrors, OnlyOneCuSeqlens) {
  fwd_.cu_seqlens_k = fv::TensorView{};
  forward_fails("cu_seqlens_k is missing; varlen mode needs both cu_seqlens_q and cu_seqlens_k");
}

TEST_F(VarlenErrors, CuSeqlensDtype) {
  fwd_.cu_seqlens_q.dtype = fv::DType::f32;
  forward_fails("cu_seqlens_q.dtype is f32 but cu_seqlens must be i32");
}

TEST_F(VarlenErrors, CuSeqlensLengthMismatch) {
  fwd_.cu_seqlens_k.shape[0] = 3;
  forward_fails("cu_seqlens_k.shape[0] (batch + 1) is 3 but cu_seqlens_q has 4");
}

TEST_F(VarlenErrors, CuSeqlensNotStartingAtZero) {
  cu_q_[0] = 1;
  forward_fails("cu_seqlens_q[0] is 1, expected 0");
}

TEST_F(VarlenErrors, CuSeqlensDecreasing) {
  cu_k_ = {0, 3, 1, 5};
  forward_fails("cu_seqlens_k is not non-decreasing: cu_seqlens_k[2] = 1 < cu_seqlens_k[1] = 3");
}

TEST_F(VarlenErrors, CuSeqlensTotalMismatch) {
  cu_q_[3] = 4;
  forward_fails("cu_seqlens_q[3] is 4 but q.shape[0] (total_q) is 5; expected them equal");
}

TEST_F(VarlenErrors, MaxSeqlenTooSmall) {
  fwd_.max_seqlen_q = 2;
  forward_fails("max_seqlen_q is 2 but the longest sequence has 3 rows");
}

TEST_F(VarlenErrors, LseShape) {
  fwd_.lse = fv::contiguous_view(lse_.data(), fv::DType::f32, {kB, kH, 5});
  forward_fails("lse has rank 3, expected 2 (heads, total_q)");
}

TEST(TensorViews, StridedViewNeedsOneStridePerDim) {
  float x = 0;
  expect_error(
      [&] {
        fv::strided_view(&x, fv::DType::f32, {1, 2}, {1});
      },
      "strided_view got 1 strides for a shape of rank 2");
}

TEST(TensorViews, ContiguousViewRank) {
  float x = 0;
  expect_error(
      [&] {
        fv::contiguous_view(&x, fv::DType::f32, {1, 1, 1, 1, 1});
      },
      "a tensor view has rank 5, expected 1 to 4");
}

}  // namespace

// The message when no CUDA kernel takes a call (src/api/cuda_refusal.h): checked on the host, since
// the GPU paths that produce it need a device.
TEST(CudaRefusal, Fp8InputsGiveTheHopperForwardsReasonAlone) {
  const std::string why = fv::detail::cuda_refusal(
      fv::DType::f8e4m3, 40, "the sm80 forward supports f16 and bf16, got f8e4m3",
      "the FP8 (f8e4m3) forward needs a head dim that is a multiple of 16 up to 256, got 40");
  EXPECT_EQ(why,
            "f8e4m3 inputs run on the Hopper (sm90) forward only, which cannot take this call: the "
            "FP8 (f8e4m3) forward needs a head dim that is a multiple of 16 up to 256, got 40");
}

TEST(CudaRefusal, WideHeadsGiveBothReasons) {
  EXPECT_EQ(fv::detail::cuda_refusal(fv::DType::bf16, 512, "sm80: too wide", "no bucket 512"),
            "sm80: too wide; the Hopper forward: no bucket 512");
}

TEST(CudaRefusal, OtherwiseThePortableKernelsReason) {
  EXPECT_EQ(fv::detail::cuda_refusal(fv::DType::bf16, 64, "sm80: no", "sm90: no"), "sm80: no");
  // The Hopper forward not asked (a forced sm80 backend, a backward): its reason is empty.
  EXPECT_EQ(fv::detail::cuda_refusal(fv::DType::f8e4m3, 64, "sm80: no", ""), "sm80: no");
  EXPECT_EQ(fv::detail::cuda_refusal(fv::DType::bf16, 512, "sm80: no", ""), "sm80: no");
}
