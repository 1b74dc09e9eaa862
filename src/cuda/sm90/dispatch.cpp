// Routes a (dtype, head-dim bucket) to its generated sm90 instantiation; the compiled buckets come
// from FLASHVISION_HEAD_DIMS (compiled_buckets.h).
#include "cuda/sm90/dispatch.h"

#include <string>

#include "compiled_buckets.h"
#include "cuda/sm90/launch.h"
#include "flashvision/error.h"

namespace flashvision::detail::sm90 {
namespace {

template <int... kDims>
bool contains(sm80::HeadDimList<kDims...>, int bucket) {
  return ((bucket == kDims) || ...);
}

template <DType kDType, int... kDims>
void forward_in(sm80::HeadDimList<kDims...>, int bucket, const FwdParams& params, void* stream) {
  const bool ran = ((bucket == kDims ? (run_fwd<kDType, kDims>(params, stream), true) : false) || ...);
  if (!ran) throw Error("sm90: head-dim bucket " + std::to_string(bucket) + " is not compiled");
}

}  // namespace

bool bucket_compiled(int bucket) { return contains(sm80::Sm90CompiledHeadDims{}, bucket); }

const char* compiled_buckets_text() { return sm80::kSm90CompiledHeadDimsText; }

void forward(DType dtype, int bucket, const FwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16: return forward_in<DType::f16>(sm80::Sm90CompiledHeadDims{}, bucket, params, stream);
    case DType::bf16:
      return forward_in<DType::bf16>(sm80::Sm90CompiledHeadDims{}, bucket, params, stream);
    default: throw Error(std::string("sm90: the forward supports f16 and bf16, got ") + to_string(dtype));
  }
}

}  // namespace flashvision::detail::sm90
