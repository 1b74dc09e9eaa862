// The small backward kernels around the main one: D = rowsum(dO * O), LSE in log2 units and the
// fp32 dQ accumulator zeroed before it; after it, that accumulator scaled and converted to the
// storage dtype, and (when the main kernel split the query blocks, of every tile or of the last
// wave's) the fp32 partial dK, dV summed and converted. All are memory-bound and independent of
// the head-dim bucket.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/sm80/dq_layout.h"
#include "cuda/sm80/launch.h"

namespace flashvision::detail::sm80 {
namespace {

constexpr int kAuxThreads = 256;

/// (sequence, row within the operand) of workspace row `ws_row`: dense workspaces stack the
/// sequences, varlen ones are already indexed by packed row (sequence stride 0).
__device__ __forceinline__ void split_row(const ShapeParams& s, int64_t ws_row, int64_t& seq,
                                          int64_t& row) {
  if (s.cu_seqlens_q != nullptr) {
    seq = 0;
    row = ws_row;
  } else {
    seq = ws_row / s.seqlen_q;
    row = ws_row % s.seqlen_q;
  }
}

/// kLanes lanes per (row, head), 8 consecutive columns each per round (kLanes: the power of two
/// that covers the row's 8-column chunks, at most a warp; rounds beyond 256 columns at kLanes =
/// 32). Items run row-fastest within a head, as the workspace vectors do: the dvec and lse_log2
/// writes and the lse reads are coalesced, and so are the rows of O and dO in SDPA's [B, H, N, D]
/// order. One warp per row, as before, left most lanes idle below D = 256 and kept too few bytes
/// in flight to reach the memory's bandwidth (195 us against FA2's 99 on ViT-B/16's backward).
/// It also zeroes the row's fp32 dQ accumulator (in the workspace's layout, kTiled), which a
/// memset before it did in a launch of its own; the items run over the workspace's rows, so the
/// tiled layout's padding rows are zeroed too.
template <typename T, int kLanes, bool kTiled>
__global__ void __launch_bounds__(kAuxThreads)
    bwd_preprocess_kernel(const __grid_constant__ BwdParams p) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0);
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * kAuxThreads + threadIdx.x;
  const int64_t item = thread / kLanes;
  const int sub = static_cast<int>(thread % kLanes);
  const ShapeParams& s = p.shape;
  const int64_t rows = p.dq_head_rows;
  // Lanes past the last item still join the shuffles of their group, which never mixes items.
  const bool in_grid = item < rows * s.heads;
  const int head = in_grid ? static_cast<int>(item / rows) : 0;
  const int64_t ws_row = in_grid ? item % rows : 0;
  const bool valid = in_grid && ws_row < p.accum_rows;
  if (in_grid) {
    float* dq = p.dq_accum + head * rows * s.head_dim;
    for (int col = sub * 8; col < s.head_dim; col += kLanes * 8) {
      float4* chunk = reinterpret_cast<float4*>(dq + dq_offset<kTiled>(ws_row, col, s.head_dim));
      chunk[0] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      chunk[1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
  int64_t seq, row;
  split_row(s, ws_row, seq, row);
  float dot = 0.0f;
  if (valid) {
    const T* out = operand_at<const T>(p.out, seq, row, head);
    const T* dout = operand_at<const T>(p.dout, seq, row, head);
    for (int col = sub * 8; col < s.head_dim; col += kLanes * 8) {
      const uint4 o = *reinterpret_cast<const uint4*>(out + col);
      const uint4 d = *reinterpret_cast<const uint4*>(dout + col);
      const uint32_t ow[4] = {o.x, o.y, o.z, o.w}, dw[4] = {d.x, d.y, d.z, d.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 a = ptx::unpack2<T>(ow[i]), b = ptx::unpack2<T>(dw[i]);
        dot = fmaf(a.x, b.x, fmaf(a.y, b.y, dot));
      }
    }
  }
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    dot += __shfl_xor_sync(0xffffffffu, dot, offset);
  }
  if (valid && sub == 0) {
    const int64_t vec = head * p.accum_rows + ws_row;
    p.dvec[vec] = dot;
    const float lse = p.lse[seq * p.lse_seq_stride + head * p.lse_head_stride +
                            row * p.lse_row_stride];
    // A row that saw no key (lse = -inf) has P = 0 everywhere: +inf makes exp2 give exactly 0.
    p.lse_log2[vec] = lse == -INFINITY ? INFINITY : lse * static_cast<float>(M_LOG2E);
  }
}

/// 8 fp32 values times `scale` packed into 8 storage elements at `dst`.
template <typename T>
__device__ __forceinline__ void store_chunk(T* dst, const float (&v)[8], float scale) {
  uint4 out;
  out.x = ptx::pack2<T>(v[0] * scale, v[1] * scale);
  out.y = ptx::pack2<T>(v[2] * scale, v[3] * scale);
  out.z = ptx::pack2<T>(v[4] * scale, v[5] * scale);
  out.w = ptx::pack2<T>(v[6] * scale, v[7] * scale);
  *reinterpret_cast<uint4*>(dst) = out;
}

/// One thread per 8 columns of one (row, head): 8 consecutive floats in either layout of the
/// workspace (dq_layout.h).
template <typename T, bool kTiled>
__global__ void __launch_bounds__(kAuxThreads) bwd_convert_dq_kernel(const __grid_constant__ BwdParams p) {
  const ShapeParams& s = p.shape;
  const int chunks_per_row = s.head_dim / 8;
  const int64_t total = p.accum_rows * s.heads * chunks_per_row;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * kAuxThreads + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * kAuxThreads) {
    const int col = static_cast<int>(item % chunks_per_row) * 8;
    const int64_t rest = item / chunks_per_row;
    const int head = static_cast<int>(rest % s.heads);
    const int64_t ws_row = rest / s.heads;
    const float4* src =
        reinterpret_cast<const float4*>(p.dq_accum + head * p.dq_head_rows * s.head_dim +
                                        dq_offset<kTiled>(ws_row, col, s.head_dim));
    const float4 lo = src[0], hi = src[1];
    const float values[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    int64_t seq, row;
    split_row(s, ws_row, seq, row);
    store_chunk<T>(operand_at<T>(p.dq, seq, row, head) + col, values, s.scale);
  }
}

/// Sums the 8 columns at `offset` of every split's partial workspace, in split order.
__device__ __forceinline__ void sum_splits(const float* ws, int splits, int64_t split_stride,
                                           int64_t offset, float (&sum)[8]) {
  for (float& x : sum) x = 0.0f;
  for (int split = 0; split < splits; ++split) {
    const float4* src = reinterpret_cast<const float4*>(ws + split * split_stride + offset);
    const float4 lo = src[0], hi = src[1];
    const float part[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) sum[i] += part[i];
  }
}

/// One thread per 8 columns of one (sequence, key row, kv head): the query splits' partial dK and
/// dV summed in split order (deterministic) and converted. Only rows inside a sequence are
/// written, as the unsplit main kernel does.
template <typename T>
__global__ void __launch_bounds__(kAuxThreads)
    bwd_reduce_dkdv_kernel(const __grid_constant__ BwdParams p) {
  const ShapeParams& s = p.shape;
  const int chunks_per_row = s.head_dim / 8;
  const int64_t total = int64_t{s.batch} * s.seqlen_k * s.heads_kv * chunks_per_row;
  const int64_t split_stride = int64_t{s.heads_kv} * p.partial_rows * s.head_dim;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * kAuxThreads + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * kAuxThreads) {
    const int col = static_cast<int>(item % chunks_per_row) * 8;
    int64_t rest = item / chunks_per_row;
    const int head_kv = static_cast<int>(rest % s.heads_kv);
    rest /= s.heads_kv;
    const int row = static_cast<int>(rest % s.seqlen_k);
    const int seq = static_cast<int>(rest / s.seqlen_k);
    const SeqRange r = seq_range(s, seq);
    if (row >= r.k_len) continue;
    const int64_t seq_row = s.cu_seqlens_k != nullptr ? r.k_begin : int64_t{seq} * s.seqlen_k;
    const int64_t offset = (head_kv * p.partial_rows + seq_row + row) * s.head_dim + col;
    float sum[8];
    sum_splits(p.dk_partial, p.num_splits, split_stride, offset, sum);
    store_chunk<T>(operand_at<T>(p.dk, seq, r.k_begin + row, head_kv) + col, sum, s.scale);
    sum_splits(p.dv_partial, p.num_splits, split_stride, offset, sum);
    store_chunk<T>(operand_at<T>(p.dv, seq, r.k_begin + row, head_kv) + col, sum, 1.0f);
  }
}

/// One thread per 8 columns of one key row of one tile of a last-wave split (params.h's
/// tail_tile0): the tile's tail_parts partial dK and dV, CTA-major, summed in part order and
/// converted. Rows past the sequence's keys were not written and are skipped.
template <typename T>
__global__ void __launch_bounds__(kAuxThreads)
    bwd_reduce_tail_kernel(const __grid_constant__ BwdParams p) {
  const ShapeParams& s = p.shape;
  const int chunks_per_row = s.head_dim / 8;
  const int64_t tail_tiles = int64_t{p.num_n_blocks} * s.batch * s.heads_kv - p.tail_tile0;
  const int64_t total = tail_tiles * p.tail_block_n * chunks_per_row;
  const int64_t part_stride = int64_t{p.tail_block_n} * s.head_dim;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * kAuxThreads + threadIdx.x; item < total;
       item += static_cast<int64_t>(gridDim.x) * kAuxThreads) {
    const int col = static_cast<int>(item % chunks_per_row) * 8;
    const int64_t rest = item / chunks_per_row;
    const int key = static_cast<int>(rest % p.tail_block_n);
    const int64_t tail_tile = rest / p.tail_block_n;
    // Tiles run key block fastest, then kv head, then sequence (bwd_kernel.cuh's cta_tile).
    const int64_t tile = p.tail_tile0 + tail_tile;
    const int n_block = static_cast<int>(tile % p.num_n_blocks);
    const int64_t bh = tile / p.num_n_blocks;
    const int head_kv = static_cast<int>(bh % s.heads_kv);
    const int seq = static_cast<int>(bh / s.heads_kv);
    const SeqRange r = seq_range(s, seq);
    const int row = n_block * p.tail_block_n + key;
    if (row >= r.k_len) continue;
    const int64_t offset = (tail_tile * p.tail_parts * p.tail_block_n + key) * s.head_dim + col;
    float sum[8];
    sum_splits(p.dk_partial, p.tail_parts, part_stride, offset, sum);
    store_chunk<T>(operand_at<T>(p.dk, seq, r.k_begin + row, head_kv) + col, sum, s.scale);
    sum_splits(p.dv_partial, p.tail_parts, part_stride, offset, sum);
    store_chunk<T>(operand_at<T>(p.dv, seq, r.k_begin + row, head_kv) + col, sum, 1.0f);
  }
}

/// Blocks of kAuxThreads for `items` one-thread items; grid-stride beyond 65,536 blocks.
unsigned aux_blocks(int64_t items) {
  const int64_t blocks = (items + kAuxThreads - 1) / kAuxThreads;
  return static_cast<unsigned>(blocks > 65536 ? 65536 : blocks);
}

/// The lanes per row of the preprocess: the power of two that covers head_dim / 8 chunks, at most
/// a warp.
int preprocess_lanes(int head_dim) {
  int lanes = 1;
  while (lanes < 32 && lanes * 8 < head_dim) lanes *= 2;
  return lanes;
}

template <typename T, int kLanes>
void launch_bwd_preprocess(const BwdParams& params, cudaStream_t stream) {
  const int64_t threads = params.dq_head_rows * params.shape.heads * kLanes;
  const int64_t blocks = (threads + kAuxThreads - 1) / kAuxThreads;
  auto* kernel = params.dq_layout == kDqTiles ? &bwd_preprocess_kernel<T, kLanes, true>
                                              : &bwd_preprocess_kernel<T, kLanes, false>;
  kernel<<<static_cast<unsigned>(blocks), kAuxThreads, 0, stream>>>(params);
}

}  // namespace

template <DType kDType>
void run_bwd_preprocess(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  auto* s = static_cast<cudaStream_t>(stream);
  switch (preprocess_lanes(params.shape.head_dim)) {
    case 1: launch_bwd_preprocess<T, 1>(params, s); break;
    case 2: launch_bwd_preprocess<T, 2>(params, s); break;
    case 4: launch_bwd_preprocess<T, 4>(params, s); break;
    case 8: launch_bwd_preprocess<T, 8>(params, s); break;
    case 16: launch_bwd_preprocess<T, 16>(params, s); break;
    default: launch_bwd_preprocess<T, 32>(params, s); break;
  }
  cuda_check(cudaGetLastError(), "the sm80 backward preprocess launch");
}

template <DType kDType>
void run_bwd_convert_dq(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  const int64_t items = params.accum_rows * params.shape.heads * (params.shape.head_dim / 8);
  auto* kernel = params.dq_layout == kDqTiles ? &bwd_convert_dq_kernel<T, true>
                                              : &bwd_convert_dq_kernel<T, false>;
  kernel<<<aux_blocks(items), kAuxThreads, 0, static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the sm80 dQ convert launch");
}

template <DType kDType>
void run_bwd_reduce_dkdv(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  const ShapeParams& s = params.shape;
  if (params.tail_parts > 1) {
    const int64_t tail_tiles =
        int64_t{params.num_n_blocks} * s.batch * s.heads_kv - params.tail_tile0;
    const int64_t items = tail_tiles * params.tail_block_n * (s.head_dim / 8);
    if (items == 0) return;
    bwd_reduce_tail_kernel<T><<<aux_blocks(items), kAuxThreads, 0,
                                static_cast<cudaStream_t>(stream)>>>(params);
    cuda_check(cudaGetLastError(), "the sm80 dK/dV tail reduce launch");
    return;
  }
  const int64_t items = int64_t{s.batch} * s.seqlen_k * s.heads_kv * (s.head_dim / 8);
  if (items == 0) return;
  bwd_reduce_dkdv_kernel<T><<<aux_blocks(items), kAuxThreads, 0,
                              static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the sm80 dK/dV reduce launch");
}

template void run_bwd_preprocess<DType::f16>(const BwdParams&, void*);
template void run_bwd_preprocess<DType::bf16>(const BwdParams&, void*);
template void run_bwd_convert_dq<DType::f16>(const BwdParams&, void*);
template void run_bwd_convert_dq<DType::bf16>(const BwdParams&, void*);
template void run_bwd_reduce_dkdv<DType::f16>(const BwdParams&, void*);
template void run_bwd_reduce_dkdv<DType::bf16>(const BwdParams&, void*);

}  // namespace flashvision::detail::sm80
