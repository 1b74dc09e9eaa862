// The combine of a forward's split tiles (fwd_split.h, fwd_combine.h): every part of a tile wrote
// its O, normalized by its own sum, and its LSE over its keys; the merged row is the parts' O
// weighted by exp(LSE_part - LSE), where LSE = log(sum of exp(LSE_part)). Exact up to fp32
// rounding, and independent of the kernel and the bucket: a power of two of lanes per query row.
#include "cuda/common/fwd_combine.h"

#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/fwd_split.h"
#include "cuda/common/fwd_tile_order.cuh"
#include "cuda/common/grid_dependency.cuh"
#include "cuda/common/programmatic_launch.h"
#include "cuda/common/ptx.cuh"
#include "cuda/common/tile_io.cuh"
#include "flashvision/error.h"

namespace flashvision::detail {
namespace {

constexpr int kCombineThreads = 256;

/// kLanes lanes per query row, 4 columns each per round (kLanes: the power of two that covers the
/// row's float4 chunks, at least kFwdMaxSplitParts so that one lane per part holds its LSE, at
/// most a warp). One warp per row left half of its lanes idle at D = 64, and its loads of the
/// parts' O, in a loop of a run-time bound, were issued one part after another; the loop below
/// has a compile-time bound, so that the loads of every part issue together.
template <typename T, int kLanes>
__global__ void __launch_bounds__(kCombineThreads)
    fwd_combine_kernel(const __grid_constant__ FwdCombineParams p) {
  static_assert(kLanes >= kFwdMaxSplitParts && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int sub = lane % kLanes;
  const int group0 = lane - sub;  // the row's first lane in the warp
  const int64_t split_row =
      (static_cast<int64_t>(blockIdx.x) * kCombineThreads + threadIdx.x) / kLanes;
  // Rows past the split ones, or past the sequence, still join their group's shuffles.
  const int64_t split_rows = static_cast<int64_t>(p.num_tiles - p.split_tile0) * p.split_rows;
  const bool in_grid = split_row < split_rows;
  const int tile_rank = in_grid ? static_cast<int>(split_row / p.split_rows) : 0;
  const int tile_row = in_grid ? static_cast<int>(split_row % p.split_rows) : 0;
  // The tile's place (fwd_combine.h); splits are dense-only, so the sequence's rows start at 0.
  const FwdTilePlace place =
      fwd_tile_place(p.split_tile0 + tile_rank, p.num_m_blocks, p.value_slices);
  const int head = place.bh % p.heads;
  const int seq = place.bh / p.heads;
  const int row = place.m_block * p.split_rows + tile_row;
  const bool valid = in_grid && row < p.seqlen_q;

  // Launched as the forward's programmatic dependent, this grid may start before the forward
  // ends: the partials are read only once it has (a no-op after a plain launch).
  ptx::wait_for_prerequisite_grids();
  // Lane `part` of the group holds that part's LSE; parts without keys for the row have -inf and
  // weigh 0.
  const int64_t unit0 = static_cast<int64_t>(tile_rank) * p.split_parts;
  const float part_lse = valid && sub < p.split_parts
                             ? p.split_lse[(unit0 + sub) * p.split_rows + tile_row]
                             : -INFINITY;
  float max_lse = part_lse;
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    max_lse = fmaxf(max_lse, __shfl_xor_sync(0xffffffffu, max_lse, offset));
  }
  const bool empty = max_lse == -INFINITY;
  const float weight = empty || part_lse == -INFINITY ? 0.0f : expf(part_lse - max_lse);
  float sum = weight;
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  const float scale = empty ? 0.0f : weight / sum;
  float part_scale[kFwdMaxSplitParts];
#pragma unroll
  for (int part = 0; part < kFwdMaxSplitParts; ++part) {
    part_scale[part] = __shfl_sync(0xffffffffu, scale, group0 + part);
  }
  if (!valid) return;

  const int col0 = place.slice * p.split_cols;
  T* out_row = operand_at<T>(p.out, seq, row, head) + col0;
  const float* o_row = p.split_o + (unit0 * p.split_rows + tile_row) * p.split_cols;
  const int64_t part_stride = static_cast<int64_t>(p.split_rows) * p.split_cols;
  const int cols = min(p.split_cols, p.head_dim - col0);
  for (int col = sub * 4; col < cols; col += kLanes * 4) {
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int part = 0; part < kFwdMaxSplitParts; ++part) {
      if (part < p.split_parts) {
        const float w = part_scale[part];
        const float4 o = *reinterpret_cast<const float4*>(o_row + part * part_stride + col);
        acc.x += w * o.x;
        acc.y += w * o.y;
        acc.z += w * o.z;
        acc.w += w * o.w;
      }
    }
    *reinterpret_cast<uint2*>(out_row + col) =
        make_uint2(ptx::pack2<T>(acc.x, acc.y), ptx::pack2<T>(acc.z, acc.w));
  }
  // Every slice of a query block has the same LSE: the first writes it.
  if (p.lse != nullptr && sub == 0 && place.slice == 0) {
    p.lse[seq * p.lse_seq_stride + head * p.lse_head_stride + row * p.lse_row_stride] =
        empty ? -INFINITY : max_lse + logf(sum);
  }
}

/// The lanes per row of the combine: the power of two that covers head_dim / 4 chunks, at least
/// kFwdMaxSplitParts, at most a warp.
int combine_lanes(int head_dim) {
  int lanes = kFwdMaxSplitParts;
  while (lanes < 32 && lanes * 4 < head_dim) lanes *= 2;
  return lanes;
}

template <typename T, int kLanes>
void launch_combine(const FwdCombineParams& params, cudaStream_t stream) {
  const int64_t rows =
      static_cast<int64_t>(params.num_tiles - params.split_tile0) * params.split_rows;
  const auto blocks =
      static_cast<unsigned>((rows * kLanes + kCombineThreads - 1) / kCombineThreads);
  launch_kernel(fwd_combine_kernel<T, kLanes>, dim3(blocks), dim3(kCombineThreads), 0, stream,
                params.early_start, "the forward's split combine launch", params);
}

template <DType kDType>
void run_combine(const FwdCombineParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  auto* s = static_cast<cudaStream_t>(stream);
  switch (combine_lanes(params.head_dim)) {
    case 8: launch_combine<T, 8>(params, s); break;
    case 16: launch_combine<T, 16>(params, s); break;
    default: launch_combine<T, 32>(params, s); break;
  }
  cuda_check(cudaGetLastError(), "the forward's split combine launch");
}

}  // namespace

void combine_split(DType dtype, const FwdCombineParams& params, void* stream) {
  if (params.split_tile0 >= params.num_tiles) return;
  switch (dtype) {
    case DType::f16: return run_combine<DType::f16>(params, stream);
    case DType::bf16: return run_combine<DType::bf16>(params, stream);
    default:
      throw Error(std::string("the forward's split combine supports f16 and bf16, got ") +
                  to_string(dtype));
  }
}

}  // namespace flashvision::detail
