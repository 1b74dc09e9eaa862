// Routes a (dtype, head-dim bucket, tile) to its generated sm90 instantiation; the
// compiled buckets come from FLASHVISION_HEAD_DIMS (compiled_buckets.h).
#include "cuda/sm90/dispatch.h"

#include <string>

#include "compiled_buckets.h"
#include "cuda/sm90/bwd_config.h"
#include "cuda/sm90/launch.h"
#include "cuda/sm90/tile_config.h"
#include "flashvision/error.h"

namespace flashvision::detail::sm90 {
namespace {

template <int... kDims>
bool contains(sm80::HeadDimList<kDims...>, int bucket) {
  return ((bucket == kDims) || ...);
}

/// The instantiation of bucket kDim with `block_m` x `block_n` tiles: 128 rows with the long,
/// second, short or text key width, or the wide rows with the wide tile's width.
template <DType kDType, int kDim>
void forward_bucket(int block_m, int block_n, const FwdParams& params, void* stream) {
  constexpr int kLong = fwd_tile(kDim).block_n;
  constexpr int kSecond = second_block_n(kDim);
  constexpr int kShort = short_block_n(kDim);
  constexpr int kText = text_block_n(kDim);
  constexpr int kWide = wide_block_m(kDim);
  if (block_m == kNarrowBlockM && block_n == kLong) {
    return run_fwd<kDType, kDim, kNarrowBlockM, kLong>(params, stream);
  }
  if constexpr (kSecond != 0) {
    if (block_m == kNarrowBlockM && block_n == kSecond) {
      return run_fwd<kDType, kDim, kNarrowBlockM, kSecond>(params, stream);
    }
  }
  if constexpr (kShort != 0) {
    if (block_m == kNarrowBlockM && block_n == kShort) {
      return run_fwd<kDType, kDim, kNarrowBlockM, kShort>(params, stream);
    }
  }
  if constexpr (kText != 0) {
    if (block_m == kNarrowBlockM && block_n == kText) {
      return run_fwd<kDType, kDim, kNarrowBlockM, kText>(params, stream);
    }
  }
  if constexpr (kWide != 0) {
    constexpr int kWideN = wide_block_n(kDim);
    if (block_m == kWide && block_n == kWideN) {
      return run_fwd<kDType, kDim, kWide, kWideN>(params, stream);
    }
  }
  throw Error("sm90: head-dim bucket " + std::to_string(kDim) + " has no " +
              std::to_string(block_m) + " x " + std::to_string(block_n) + " tile (tile_config.h)");
}

template <DType kDType, int... kDims>
void forward_in(sm80::HeadDimList<kDims...>, int bucket, int block_m, int block_n,
                const FwdParams& params, void* stream) {
  const bool ran =
      ((bucket == kDims ? (forward_bucket<kDType, kDims>(block_m, block_n, params, stream), true)
                        : false) ||
       ...);
  if (!ran) throw Error("sm90: head-dim bucket " + std::to_string(bucket) + " is not compiled");
}

/// The backward of bucket kDim where the sm90 backward serves it; false where it does not.
template <DType kDType, int kDim>
bool backward_bucket(const BwdParams& params, void* stream) {
  if constexpr (bwd_bucket_supported(kDim)) {
    run_bwd<kDType, kDim>(params, stream);
    return true;
  }
  return false;
}

template <DType kDType, int... kDims>
void backward_in(sm80::HeadDimList<kDims...>, int bucket, const BwdParams& params, void* stream) {
  const bool ran = ((bucket == kDims && backward_bucket<kDType, kDims>(params, stream)) || ...);
  if (!ran) {
    throw Error("sm90: the backward of head-dim bucket " + std::to_string(bucket) +
                " is not compiled");
  }
}

template <int... kDims>
bool backward_compiled(sm80::HeadDimList<kDims...>, int bucket) {
  return ((bucket == kDims && bwd_bucket_supported(kDims)) || ...);
}

}  // namespace

bool bwd_bucket_compiled(int bucket) {
  return backward_compiled(sm80::Sm90CompiledHeadDims{}, bucket);
}

void backward_main(DType dtype, int bucket, const BwdParams& params, void* stream) {
  switch (dtype) {
    case DType::f16:
      return backward_in<DType::f16>(sm80::Sm90CompiledHeadDims{}, bucket, params, stream);
    case DType::bf16:
      return backward_in<DType::bf16>(sm80::Sm90CompiledHeadDims{}, bucket, params, stream);
    default:
      throw Error(std::string("sm90: the backward supports f16 and bf16, got ") + to_string(dtype));
  }
}

bool bucket_compiled(int bucket) { return contains(sm80::Sm90CompiledHeadDims{}, bucket); }

const char* compiled_buckets_text() { return sm80::kSm90CompiledHeadDimsText; }

void forward(DType dtype, int bucket, int block_m, int block_n, const FwdParams& params,
             void* stream) {
  switch (dtype) {
    case DType::f16:
      return forward_in<DType::f16>(sm80::Sm90CompiledHeadDims{}, bucket, block_m, block_n, params,
                                    stream);
    case DType::bf16:
      return forward_in<DType::bf16>(sm80::Sm90CompiledHeadDims{}, bucket, block_m, block_n, params,
                                     stream);
    default:
      throw Error(std::string("sm90: the forward supports f16 and bf16, got ") + to_string(dtype));
  }
}

}  // namespace flashvision::detail::sm90
