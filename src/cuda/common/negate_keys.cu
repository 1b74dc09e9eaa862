// See negate_keys.h. One thread per element: the copy reads and writes the keys once, a small
// share of a forward that reads them once per query tile.
#include "cuda/common/negate_keys.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/common/cuda_check.h"
#include "cuda/common/tile_io.cuh"

namespace flashvision::detail {
namespace {

constexpr int kThreads = 256;
/// Enough blocks to keep every SM of a large GPU busy; the loop strides over the rest.
constexpr int64_t kMaxBlocks = 4096;

__global__ void negate_keys_kernel(const NegateKeysParams p) {
  const int64_t total = p.seqs * p.rows * p.heads * p.head_dim;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int64_t col = i % p.head_dim;
    const int64_t head = i / p.head_dim % p.heads;
    const int64_t row = i / (p.head_dim * p.heads) % p.rows;
    const int64_t seq = i / (p.head_dim * p.heads * p.rows);
    const uint16_t x = operand_at<const uint16_t>(p.src, seq, row, head)[col];
    operand_at<uint16_t>(p.dst, seq, row, head)[col] = static_cast<uint16_t>(x ^ 0x8000u);
  }
}

}  // namespace

void negate_keys(const NegateKeysParams& params, void* stream) {
  const int64_t total = params.seqs * params.rows * params.heads * params.head_dim;
  if (total == 0) return;
  const auto blocks =
      static_cast<unsigned>(std::min(kMaxBlocks, (total + kThreads - 1) / kThreads));
  negate_keys_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the negated-keys copy launch");
}

}  // namespace flashvision::detail
