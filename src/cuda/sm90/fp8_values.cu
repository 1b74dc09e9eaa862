// The FP8 forward's transposition of V (fp8_values.h).
#include "cuda/sm90/fp8_values.h"

#include <cuda_runtime.h>

#include "cuda/common/cuda_check.h"

namespace flashvision::detail::sm90 {
namespace {

/// One 32-key group of one (sequence, kv head) a block, a column of D a thread: the threads of a
/// warp read 32 adjacent bytes of each key's row and each write its column's 32 bytes whole.
__global__ void transpose_fp8_values_kernel(Fp8Values v, uint8_t* transposed) {
  const int d = static_cast<int>(threadIdx.x);
  if (d >= v.head_dim) return;
  const int64_t group = blockIdx.x, head = blockIdx.y, seq = blockIdx.z;
  const auto* src =
      static_cast<const uint8_t*>(v.data) + seq * v.seq_stride + head * v.head_stride + d;
  uint32_t words[8];
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int64_t key = group * 32 + fp8_key_at(4 * w + b);
      const uint32_t byte = key < v.keys ? src[key * v.row_stride] : 0u;
      word |= byte << (8 * b);
    }
    words[w] = word;
  }
  const int64_t panel = group * 32 / v.panel_keys, offset = group * 32 % v.panel_keys;
  const int64_t panel_index = (seq * v.heads + head) * fp8_value_panels(v) + panel;
  auto* dst =
      reinterpret_cast<uint4*>(transposed + (panel_index * v.head_dim + d) * v.panel_keys + offset);
  dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
  dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
}

}  // namespace

void transpose_fp8_values(const Fp8Values& v, void* transposed, void* stream) {
  if (v.seqs * v.heads * v.keys == 0) return;
  const dim3 grid(static_cast<unsigned>(fp8_value_panels(v) * v.panel_keys / 32),
                  static_cast<unsigned>(v.heads), static_cast<unsigned>(v.seqs));
  const unsigned threads = static_cast<unsigned>((v.head_dim + 31) / 32 * 32);
  transpose_fp8_values_kernel<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      v, static_cast<uint8_t*>(transposed));
  cuda_check(cudaGetLastError(), "the FP8 forward's transposition of V");
}

}  // namespace flashvision::detail::sm90
