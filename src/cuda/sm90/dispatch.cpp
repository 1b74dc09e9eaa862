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

/// Runs the instantiation of bucket kDim with kBlockM x kBlockN tiles where that is the tile
/// asked for; false where it is not, or where the bucket lacks that tile (a width or row count of
/// 0 in tile_config.h), whose instantiation is then never named.
template <DType kDType, int kDim, int kBlockM, int kBlockN>
bool run_if_tile(int block_m, int block_n, const FwdParams& params, void* stream) {
  if constexpr (kBlockM != 0 && kBlockN != 0) {
    if (block_m == kBlockM && block_n == kBlockN) {
      run_fwd<kDType, kDim, kBlockM, kBlockN>(params, stream);
      return true;
    }
  }
  return false;
}

/// The instantiation of bucket kDim with `block_m` x `block_n` tiles: 128 rows with the long,
/// second, short or text key width, the wide rows with the wide tile's or the text width, or a
/// half tile.
template <DType kDType, int kDim>
void forward_bucket(int block_m, int block_n, const FwdParams& params, void* stream) {
  const bool ran = run_if_tile<kDType, kDim, kNarrowBlockM, fwd_tile(kDim).block_n>(
                       block_m, block_n, params, stream) ||
                   run_if_tile<kDType, kDim, kNarrowBlockM, second_block_n(kDim)>(block_m, block_n,
                                                                                  params, stream) ||
                   run_if_tile<kDType, kDim, kNarrowBlockM, short_block_n(kDim)>(block_m, block_n,
                                                                                 params, stream) ||
                   run_if_tile<kDType, kDim, kNarrowBlockM, text_block_n(kDim)>(block_m, block_n,
                                                                                params, stream) ||
                   run_if_tile<kDType, kDim, wide_block_m(kDim), wide_block_n(kDim)>(
                       block_m, block_n, params, stream) ||
                   run_if_tile<kDType, kDim, wide_block_m(kDim), text_block_n(kDim)>(
                       block_m, block_n, params, stream) ||
                   run_if_tile<kDType, kDim, kHalfBlockM, half_long_block_n(kDim)>(
                       block_m, block_n, params, stream) ||
                   run_if_tile<kDType, kDim, kHalfBlockM, half_short_block_n(kDim)>(
                       block_m, block_n, params, stream);
  if (!ran) {
    throw Error("sm90: head-dim bucket " + std::to_string(kDim) + " has no " +
                std::to_string(block_m) + " x " + std::to_string(block_n) +
                " tile (tile_config.h)");
  }
}

/// The FP8 instantiation of bucket kDim with `block_m` x `block_n` tiles where the FP8 forward
/// has it (fp8_tile_exists); false where it does not.
template <int kDim>
bool forward_fp8_bucket(int block_m, int block_n, const FwdParams& params, void* stream) {
  if constexpr (fp8_bucket(kDim)) {
    constexpr int kLong = fp8_block_n(kDim);
    constexpr int kSecond = fp8_second_block_n(kDim);
    constexpr int kWide = fp8_tile_exists(kDim, wide_block_m(kDim), kLong) ? wide_block_m(kDim) : 0;
    return run_if_tile<DType::f8e4m3, kDim, kNarrowBlockM, kLong>(block_m, block_n, params,
                                                                  stream) ||
           run_if_tile<DType::f8e4m3, kDim, kNarrowBlockM, kSecond>(block_m, block_n, params,
                                                                    stream) ||
           run_if_tile<DType::f8e4m3, kDim, kWide, kLong>(block_m, block_n, params, stream);
  }
  return false;
}

template <int... kDims>
void forward_fp8_in(sm80::HeadDimList<kDims...>, int bucket, int block_m, int block_n,
                    const FwdParams& params, void* stream) {
  const bool ran =
      ((bucket == kDims && forward_fp8_bucket<kDims>(block_m, block_n, params, stream)) || ...);
  if (!ran) {
    throw Error("sm90: the FP8 forward of head-dim bucket " + std::to_string(bucket) + " with " +
                std::to_string(block_m) + " x " + std::to_string(block_n) +
                " tiles is not compiled");
  }
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
    case DType::f8e4m3:
      return forward_fp8_in(sm80::Sm90CompiledHeadDims{}, bucket, block_m, block_n, params, stream);
    default:
      throw Error(std::string("sm90: the forward supports f16, bf16 and f8e4m3, got ") +
                  to_string(dtype));
  }
}

}  // namespace flashvision::detail::sm90
