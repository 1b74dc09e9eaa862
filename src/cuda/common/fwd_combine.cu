// The combine of a forward's split tiles (fwd_split.h, fwd_combine.h): every part of a tile wrote
// its O, normalized by its own sum, and its LSE over its keys; the merged row is the parts' O
// weighted by exp(LSE_part - LSE), where LSE = log(sum of exp(LSE_part)). Exact up to fp32
// rounding, and independent of the kernel and the bucket: one warp per query row.
#include "cuda/common/fwd_combine.h"

#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/fwd_split.h"
#include "cuda/common/ptx.cuh"
#include "cuda/common/tile_io.cuh"
#include "flashvision/error.h"

namespace flashvision::detail {
namespace {

constexpr int kCombineWarps = 8;

template <typename T>
__global__ void __launch_bounds__(kCombineWarps * 32)
    fwd_combine_kernel(const __grid_constant__ FwdCombineParams p) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t split_row =
      static_cast<int64_t>(blockIdx.x) * kCombineWarps + static_cast<int>(threadIdx.x) / 32;
  if (split_row >= static_cast<int64_t>(p.num_tiles - p.split_tile0) * p.split_rows) return;
  const int tile_rank = static_cast<int>(split_row / p.split_rows);
  const int tile_row = static_cast<int>(split_row % p.split_rows);
  // The tile's place (fwd_combine.h); splits are dense-only, so the sequence's rows start at 0.
  const int tile = p.split_tile0 + tile_rank;
  const int m_block = p.num_m_blocks - 1 - tile % p.num_m_blocks;
  const int bh = tile / p.num_m_blocks;
  const int head = bh % p.heads;
  const int seq = bh / p.heads;
  const int row = m_block * p.split_rows + tile_row;
  if (row >= p.seqlen_q) return;

  // Lane `part` holds that part's LSE; parts without keys for the row have -inf and weigh 0.
  const int64_t unit0 = static_cast<int64_t>(tile_rank) * p.split_parts;
  const float part_lse =
      lane < p.split_parts ? p.split_lse[(unit0 + lane) * p.split_rows + tile_row] : -INFINITY;
  float max_lse = part_lse;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    max_lse = fmaxf(max_lse, __shfl_xor_sync(0xffffffffu, max_lse, offset));
  }
  const bool empty = max_lse == -INFINITY;
  const float weight = empty || part_lse == -INFINITY ? 0.0f : expf(part_lse - max_lse);
  float sum = weight;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  const float scale = empty ? 0.0f : weight / sum;

  T* out_row = operand_at<T>(p.out, seq, row, head);
  for (int col = lane * 4; col < p.head_dim; col += 128) {
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int part = 0; part < p.split_parts; ++part) {
      const float w = __shfl_sync(0xffffffffu, scale, part);
      const float4 o = *reinterpret_cast<const float4*>(
          p.split_o + ((unit0 + part) * p.split_rows + tile_row) * p.split_cols + col);
      acc.x += w * o.x;
      acc.y += w * o.y;
      acc.z += w * o.z;
      acc.w += w * o.w;
    }
    *reinterpret_cast<uint2*>(out_row + col) =
        make_uint2(ptx::pack2<T>(acc.x, acc.y), ptx::pack2<T>(acc.z, acc.w));
  }
  if (p.lse != nullptr && lane == 0) {
    p.lse[seq * p.lse_seq_stride + head * p.lse_head_stride + row * p.lse_row_stride] =
        empty ? -INFINITY : max_lse + logf(sum);
  }
}

template <DType kDType>
void run_combine(const FwdCombineParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  const int64_t rows =
      static_cast<int64_t>(params.num_tiles - params.split_tile0) * params.split_rows;
  const auto blocks = static_cast<unsigned>((rows + kCombineWarps - 1) / kCombineWarps);
  fwd_combine_kernel<T>
      <<<blocks, kCombineWarps * 32, 0, static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the forward's split combine launch");
}

}  // namespace

void combine_split(DType dtype, const FwdCombineParams& params, void* stream) {
  static_assert(kFwdMaxSplitParts <= 32, "one lane per part's LSE");
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
