// Routes a (dtype, head-dim bucket) to its generated instantiation. The compiled buckets come from
// a header generated at configure time (compiled_buckets.h), so a restricted build links only the
// instantiations it has.
#include "cuda/sm80/dispatch.h"

#include <string>

#include "compiled_buckets.h"
#include "cuda/sm80/launch.h"
#include "flashvision/error.h"

namespace flashvision::detail::sm80 {
namespace {

template <DType kDType, int... kDims>
void forward_in(HeadDimList<kDims...>, int bucket, const FwdParams& params, void* stream) {
  const bool ran = ((bucket == kDims ? (run_fwd<kDType, kDims>(params, stream), true) : false) || ...);
  if (!ran) throw Error("head-dim bucket " + std::to_string(bucket) + " is not compiled");
}

template <DType kDType, int... kDims>
int ctas_per_sm_in(HeadDimList<kDims...>, int bucket, int tile_variant, int kv_mode) {
  int ctas = 0;
  const bool found =
      ((bucket == kDims ? (ctas = fwd_ctas_per_sm<kDType, kDims>(tile_variant, kv_mode), true)
                        : false) ||
       ...);
  if (!found) throw Error("head-dim bucket " + std::to_string(bucket) + " is not compiled");
  return ctas;
}

template <DType kDType, int... kDims>
void backward_in(HeadDimList<kDims...>, int bucket, const BwdParams& params, void* stream) {
  const bool ran = ((bucket == kDims ? (run_bwd<kDType, kDims>(params, stream), true) : false) || ...);
  if (!ran) throw Error("head-dim bucket " + std::to_string(bucket) + " is not compiled");
}

template <int... kDims>
bool contains(HeadDimList<kDims...>, int bucket) {
  return ((bucket == kDims) || ...);
}

[[noreturn]] void unsupported_dtype(DType dtype) {
  throw Error(std::string("the CUDA backend supports f16 and bf16, got ") + to_string(dtype));
}

}  // namespace

bool bucket_compiled(int bucket) { return contains(CompiledHeadDims{}, bucket); }

const char* compiled_buckets_text() { return kCompiledHeadDimsText; }

void forward(DType dtype, int bucket, const FwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return forward_in<DType::f16>(CompiledFwdHeadDims{}, bucket, params, stream);
    case DType::bf16: return forward_in<DType::bf16>(CompiledFwdHeadDims{}, bucket, params, stream);
    default: unsupported_dtype(dtype);
  }
}

int forward_ctas_per_sm(DType dtype, int bucket, int tile_variant, int kv_mode) {
  switch (dtype) {
    case DType::f16:
      return ctas_per_sm_in<DType::f16>(CompiledFwdHeadDims{}, bucket, tile_variant, kv_mode);
    case DType::bf16:
      return ctas_per_sm_in<DType::bf16>(CompiledFwdHeadDims{}, bucket, tile_variant, kv_mode);
    default: unsupported_dtype(dtype);
  }
}

void backward_main(DType dtype, int bucket, const BwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return backward_in<DType::f16>(CompiledHeadDims{}, bucket, params, stream);
    case DType::bf16: return backward_in<DType::bf16>(CompiledHeadDims{}, bucket, params, stream);
    default: unsupported_dtype(dtype);
  }
}

void backward_preprocess(DType dtype, const BwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return run_bwd_preprocess<DType::f16>(params, stream);
    case DType::bf16: return run_bwd_preprocess<DType::bf16>(params, stream);
    default: unsupported_dtype(dtype);
  }
}

void backward_convert_dq(DType dtype, const BwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return run_bwd_convert_dq<DType::f16>(params, stream);
    case DType::bf16: return run_bwd_convert_dq<DType::bf16>(params, stream);
    default: unsupported_dtype(dtype);
  }
}

void backward_reduce_dkdv(DType dtype, const BwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return run_bwd_reduce_dkdv<DType::f16>(params, stream);
    case DType::bf16: return run_bwd_reduce_dkdv<DType::bf16>(params, stream);
    default: unsupported_dtype(dtype);
  }
}

}  // namespace flashvision::detail::sm80
