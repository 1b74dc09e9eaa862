// The sm80 forward's L2 prefetch of K and V (sm80/fwd_kv_prefetch.cuh), on, off and as the host
// picks (FLASHVISION_SM80_FWD_KV_PREFETCH), against the float64 reference. The prefetch only asks
// L2 for lines, so a wrong slice cannot change a result; what these cases catch is a prefetch
// outside the keys' rows or a slice computation that faults (the GpuSanitize cases that
// compute-sanitizer runs are small enough for auto to turn it on), and that both settings keep
// every feature of the forward: several query blocks sharing a head's slices, GQA (the heads of a
// group share them too), keys that end inside a block, cross-attention widths, head dims below
// their bucket, varlen with empty and one-row sequences, a causal mask (which auto leaves off),
// strides of the torch layout with padded rows, and split tiles (each part prefetches its own key
// range).
#include <gtest/gtest.h>

#include <string>

#include "attention_check.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

constexpr const char* kPrefetchVar = "FLASHVISION_SM80_FWD_KV_PREFETCH";
constexpr const char* kSplitVar = "FLASHVISION_SM80_FWD_SPLIT";

class GpuKvPrefetch : public GpuKernelTest {};

TEST_P(GpuKvPrefetch, OnAndOffMatchTheReference) {
  for (const char* setting : {"1", "0", "auto"}) {
    ScopedEnv env(kPrefetchVar, setting);
    SCOPED_TRACE(std::string(kPrefetchVar) + "=" + setting);
    for (const int64_t dim : {40, 64, 80, 128, 200}) {
      AttentionCase c = dense_case(dtype(), 300, 333, dim);
      c.heads = 4;
      c.heads_kv = 2;
      check_forward(target(), c);
    }
    // SD-style cross-attention: 77 text tokens, more queries than one block.
    check_forward(target(), dense_case(dtype(), 700, 77, 64));
    // Fewer keys than query blocks share them: most slices are empty.
    check_forward(target(), dense_case(dtype(), 1000, 5, 128));
    AttentionCase causal = dense_case(dtype(), 333, 150, 64);
    causal.causal = true;
    check_forward(target(), causal);
    AttentionCase varlen = dense_case(dtype(), 0, 0, 80);
    varlen.seqlens_q = {260, 1, 0, 129};
    varlen.seqlens_k = {131, 7, 5, 300};
    check_forward(target(), varlen);
    AttentionCase strided = dense_case(dtype(), 200, 190, 72);
    strided.heads = strided.heads_kv = 3;
    strided.layout = Layout::torch;
    strided.row_pad = 8;
    check_forward(target(), strided);
  }
}

TEST_P(GpuKvPrefetch, SplitPartsPrefetchTheirOwnKeys) {
  ScopedEnv prefetch(kPrefetchVar, "1");
  for (const char* parts : {"2", "5"}) {
    ScopedEnv split(kSplitVar, parts);
    SCOPED_TRACE(std::string(kSplitVar) + "=" + parts);
    for (const int64_t dim : {64, 128}) {
      check_forward(target(), dense_case(dtype(), 200, 900, dim));
    }
  }
}

TEST_P(GpuKvPrefetch, ABadSettingIsRejectedByName) {
  expect_env_value_rejected(target(), dense_case(dtype(), 64, 64, 64), kPrefetchVar, "yes");
}

// The sm80 forward only: the Hopper forward does not prefetch (its producer's TMA loads were
// slower with it).
INSTANTIATE_TEST_SUITE_P(Cuda, GpuKvPrefetch,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16),
                                            ::testing::Values(CudaKernel::sm80)),
                         dtype_kernel_name);

}  // namespace
}  // namespace flashvision::testing
