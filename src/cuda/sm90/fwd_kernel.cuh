// sm90 forward kernel (FlashAttention-3 class): one CTA per (query block, head, sequence) with
// three warpgroups. The producer warpgroup gives up its registers (setmaxnreg) and one of its
// threads streams Q once and K, V per key block with TMA into a ring of kStages buffers guarded
// by mbarriers. Each of the two consumer warpgroups owns 64 query rows: S = Q K^T with both
// operands in shared memory, the online softmax in registers, then O += P V with P from
// registers. While one consumer warpgroup does its softmax the other's GEMMs keep the tensor
// cores busy.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/online_softmax.cuh"
#include "cuda/common/score_mask.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/sm90/params.h"
#include "cuda/sm90/ptx_sm90.cuh"
#include "cuda/sm90/tile_config.h"
#include "cuda/sm90/wgmma_ops.cuh"
#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// Compile-time geometry of the forward kernel for one head-dim bucket.
template <int kHeadDim>
struct FwdTraits {
  static constexpr FwdTile kTile = fwd_tile(kHeadDim);
  static constexpr int kBlockM = kTile.block_m;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kStages = kTile.stages;
  static constexpr int kSwizzle = swizzle_bytes(kHeadDim);
  static constexpr uint32_t kSwizzleMode = kSwizzle == 128 ? 1 : (kSwizzle == 64 ? 2 : 3);
  /// A tile is stored as kPanels column panels of rows x kSwizzle bytes (the TMA box and the
  /// wgmma swizzle atom width).
  static constexpr int kPanelCols = kSwizzle / 2;
  static constexpr int kPanels = kHeadDim / kPanelCols;
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * 2;
  static constexpr uint32_t kKvBytes = kBlockN * kHeadDim * 2;
  static_assert(kBlockM == 64 * kConsumerWarpgroups && kBlockN % 16 == 0);
  static_assert(kHeadDim % kPanelCols == 0 && kQBytes % 1024 == 0 && kKvBytes % 1024 == 0);
};

/// Shared-window addresses of the tiles and barriers, from a 1024-byte aligned base.
template <int kHeadDim>
struct SmemLayout {
  using Tr = FwdTraits<kHeadDim>;
  uint32_t base;

  __device__ uint32_t q() const { return base; }
  __device__ uint32_t k(int stage) const { return base + Tr::kQBytes + stage * Tr::kKvBytes; }
  __device__ uint32_t v(int stage) const {
    return base + Tr::kQBytes + (Tr::kStages + stage) * Tr::kKvBytes;
  }
  __device__ uint32_t barrier(int index) const {
    return base + Tr::kQBytes + 2 * Tr::kStages * Tr::kKvBytes + 8 * index;
  }
  __device__ uint32_t q_full() const { return barrier(0); }
  __device__ uint32_t k_full(int stage) const { return barrier(1 + stage); }
  __device__ uint32_t v_full(int stage) const { return barrier(1 + Tr::kStages + stage); }
  __device__ uint32_t k_empty(int stage) const { return barrier(1 + 2 * Tr::kStages + stage); }
  __device__ uint32_t v_empty(int stage) const { return barrier(1 + 3 * Tr::kStages + stage); }
};

/// Where a CTA works: its query block, head, sequence and the key blocks it visits.
struct FwdBlock {
  int m0;        ///< first query row of the block within its sequence
  int head, head_kv, seq;
  SeqRange rows;
  int n_blocks;  ///< key blocks visited, walked from the last down (masked blocks first)
  int seq_coord; ///< the tensor maps' sequence coordinate (0 in varlen mode: rows are global)
};

template <int kHeadDim>
__device__ __forceinline__ FwdBlock locate_block(const FwdParams& p) {
  using Tr = FwdTraits<kHeadDim>;
  const sm80::ShapeParams& s = p.shape;
  FwdBlock b;
  // The longest query blocks (most keys under the causal mask) are scheduled first.
  const int m_block = p.num_m_blocks - 1 - static_cast<int>(blockIdx.x % p.num_m_blocks);
  const int bh = static_cast<int>(blockIdx.x / p.num_m_blocks);
  b.head = bh % s.heads;
  b.seq = bh / s.heads;
  b.head_kv = b.head / s.group;
  b.rows = seq_range(s, b.seq);
  b.m0 = m_block * Tr::kBlockM;
  // Keys this block can see at all: under the causal mask the last row's limit bounds the rest.
  int n_end = b.rows.k_len;
  if (s.causal) n_end = max(0, min(b.rows.k_len, b.m0 + Tr::kBlockM + b.rows.k_len - b.rows.q_len));
  b.n_blocks = (n_end + Tr::kBlockN - 1) / Tr::kBlockN;
  b.seq_coord = s.cu_seqlens_q == nullptr ? b.seq : 0;
  return b;
}

/// Issues the TMA loads of one kRows-row tile, one box per column panel, all on `bar`.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void load_tile(uint32_t dst, const CUtensorMap* map, int row, int head,
                                          int seq_coord, uint32_t bar) {
  using Tr = FwdTraits<kHeadDim>;
#pragma unroll
  for (int panel = 0; panel < Tr::kPanels; ++panel) {
    tma_load_4d(dst + panel * kRows * Tr::kSwizzle, map, panel * Tr::kPanelCols, row, head,
                seq_coord, bar);
  }
}

/// The producer: Q once, then K and V of every key block into the ring, as slots free up.
template <int kHeadDim>
__device__ __forceinline__ void produce(const FwdParams& p, const FwdBlock& b,
                                        const SmemLayout<kHeadDim>& smem) {
  using Tr = FwdTraits<kHeadDim>;
  // Nothing is loaded for a block that sees no key: no copy may still be writing shared memory
  // when the CTA exits.
  if (b.n_blocks == 0) return;
  mbarrier_arrive_expect_tx(smem.q_full(), Tr::kQBytes);
  load_tile<kHeadDim, Tr::kBlockM>(smem.q(), &p.tmap_q, static_cast<int>(b.rows.q_begin) + b.m0,
                                   b.head, b.seq_coord, smem.q_full());
  for (int it = 0; it < b.n_blocks; ++it) {
    const int stage = it % Tr::kStages;
    const uint32_t free_parity = ((it / Tr::kStages) & 1) ^ 1;
    const int key_row = static_cast<int>(b.rows.k_begin) + (b.n_blocks - 1 - it) * Tr::kBlockN;
    mbarrier_wait(smem.k_empty(stage), free_parity);
    mbarrier_arrive_expect_tx(smem.k_full(stage), Tr::kKvBytes);
    load_tile<kHeadDim, Tr::kBlockN>(smem.k(stage), &p.tmap_k, key_row, b.head_kv, b.seq_coord,
                                     smem.k_full(stage));
    mbarrier_wait(smem.v_empty(stage), free_parity);
    mbarrier_arrive_expect_tx(smem.v_full(stage), Tr::kKvBytes);
    load_tile<kHeadDim, Tr::kBlockN>(smem.v(stage), &p.tmap_v, key_row, b.head_kv, b.seq_coord,
                                     smem.v_full(stage));
  }
}

/// S = Q K^T for this warpgroup's 64 rows: both operands K-major, one wgmma per 16 columns of D.
template <typename T, int kHeadDim>
__device__ __forceinline__ void gemm_qk(float (&acc)[FwdTraits<kHeadDim>::kBlockN / 2],
                                        uint32_t q_rows, uint32_t k_tile) {
  using Tr = FwdTraits<kHeadDim>;
  constexpr uint32_t kGroupBytes = 8 * Tr::kSwizzle;  // 8 rows of a panel: one swizzle atom
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const int col = kk * 16;
    const uint32_t within = (col % Tr::kPanelCols) * 2;
    const uint32_t panel = col / Tr::kPanelCols;
    const uint64_t desc_q = smem_descriptor(q_rows + panel * Tr::kBlockM * Tr::kSwizzle + within,
                                            16, kGroupBytes, Tr::kSwizzleMode);
    const uint64_t desc_k = smem_descriptor(k_tile + panel * Tr::kBlockN * Tr::kSwizzle + within,
                                            16, kGroupBytes, Tr::kSwizzleMode);
    wgmma_ss<T, Tr::kBlockN>(acc, desc_q, desc_k, kk > 0 ? 1u : 0u);
  }
}

/// O += P V: P from registers (k16 slices of the probability block), V MN-major: its leading
/// byte offset steps between column panels, its stride byte offset between 8-key groups.
template <typename T, int kHeadDim>
__device__ __forceinline__ void gemm_pv(float (&acc)[kHeadDim / 2],
                                        const uint32_t (&p_frag)[FwdTraits<kHeadDim>::kBlockN / 16][4],
                                        uint32_t v_tile) {
  using Tr = FwdTraits<kHeadDim>;
#pragma unroll
  for (int j = 0; j < Tr::kBlockN / 16; ++j) {
    const uint64_t desc_v = smem_descriptor(v_tile + j * 16 * Tr::kSwizzle,
                                            Tr::kBlockN * Tr::kSwizzle, 8 * Tr::kSwizzle,
                                            Tr::kSwizzleMode);
    wgmma_rs_mn<T, kHeadDim>(acc, p_frag[j], desc_v, 1u);
  }
}

/// Writes this warpgroup's rows of O (normalized) and their LSE.
template <typename T, int kHeadDim>
__device__ __forceinline__ void store_output(const FwdParams& p, const FwdBlock& b, int row0,
                                             const float (&acc_o)[1][kHeadDim / 8][4],
                                             const float (&inv_sum)[1][2],
                                             const float (&lse)[1][2], int lane) {
  const sm80::ShapeParams& s = p.shape;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + lane / 4 + half * 8;
    if (row >= b.rows.q_len) continue;
    T* out_row = operand_at<T>(p.out, b.seq, b.rows.q_begin + row, b.head);
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
      const int col = d * 8 + 2 * (lane % 4);
      if (d * 8 < s.head_dim) {
        *reinterpret_cast<uint32_t*>(out_row + col) =
            ptx::pack2<T>(acc_o[0][d][2 * half] * inv_sum[0][half],
                          acc_o[0][d][2 * half + 1] * inv_sum[0][half]);
      }
    }
    if (p.lse != nullptr && lane % 4 == 0) {
      p.lse[b.seq * p.lse_seq_stride + b.head * p.lse_head_stride +
            (b.rows.q_begin + row) * p.lse_row_stride] = lse[0][half];
    }
  }
}

/// A consumer warpgroup: its 64 query rows against every key block of the ring.
template <typename T, int kHeadDim>
__device__ __forceinline__ void consume(const FwdParams& p, const FwdBlock& b,
                                        const SmemLayout<kHeadDim>& smem, int consumer) {
  using Tr = FwdTraits<kHeadDim>;
  constexpr int kBlockN = Tr::kBlockN;
  const sm80::ShapeParams& s = p.shape;
  const int warp = (static_cast<int>(threadIdx.x) / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wg_row0 = b.m0 + consumer * 64;
  const uint32_t q_rows = smem.q() + consumer * 64 * Tr::kSwizzle;

  // Accumulators in the mma tile layout ([1][columns / 8][4]) so that the softmax, mask and
  // fragment conversion of the sm80 path apply; the wgmma wrappers see them as flat arrays.
  float acc_o[1][kHeadDim / 8][4];
  clear(acc_o);
  float acc_s[1][kBlockN / 8][4];
  clear(acc_s);
  auto& acc_o_flat = reinterpret_cast<float(&)[kHeadDim / 2]>(acc_o);
  auto& acc_s_flat = reinterpret_cast<float(&)[kBlockN / 2]>(acc_s);
  OnlineSoftmax<1> softmax;
  softmax.init();

  if (b.n_blocks > 0) mbarrier_wait(smem.q_full(), 0);
  for (int it = 0; it < b.n_blocks; ++it) {
    const int stage = it % Tr::kStages;
    const uint32_t parity = (it / Tr::kStages) & 1;
    const int n0 = (b.n_blocks - 1 - it) * kBlockN;

    mbarrier_wait(smem.k_full(stage), parity);
    fence_registers(acc_s_flat);
    wgmma_fence();
    gemm_qk<T, kHeadDim>(acc_s_flat, q_rows, smem.k(stage));
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(acc_s_flat);
    if (lane == 0) mbarrier_arrive(smem.k_empty(stage));

    const bool needs_mask = n0 + kBlockN > b.rows.k_len ||
                            (s.causal && n0 + kBlockN - 1 > wg_row0 + b.rows.k_len - b.rows.q_len);
    if (needs_mask) {
      mask_scores(acc_s, wg_row0 + warp * 16, n0, b.rows.q_len, b.rows.k_len, s.causal, lane);
    }
    softmax.update(acc_s, acc_o, s.scale_log2);
    uint32_t p_frag[1][kBlockN / 16][4];
    acc_to_a_frags<T>(p_frag, acc_s);

    mbarrier_wait(smem.v_full(stage), parity);
    fence_registers(acc_o_flat);
    wgmma_fence();
    gemm_pv<T, kHeadDim>(acc_o_flat, p_frag[0], smem.v(stage));
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(acc_o_flat);
    if (lane == 0) mbarrier_arrive(smem.v_empty(stage));
  }

  float inv_sum[1][2], lse[1][2];
  softmax.finalize(s.scale, inv_sum, lse);
  store_output<T, kHeadDim>(p, b, wg_row0 + warp * 16, acc_o, inv_sum, lse, lane);
}

/// Forward attention for one (query block, head, sequence).
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kThreads, 1) fwd_kernel(const __grid_constant__ FwdParams p) {
  using Tr = FwdTraits<kHeadDim>;
  extern __shared__ unsigned char smem_raw[];
  const FwdBlock b = locate_block<kHeadDim>(p);
  if (b.m0 >= b.rows.q_len) return;  // a varlen sequence shorter than the longest one

  const uint32_t raw = ptx::smem_addr(smem_raw);
  const SmemLayout<kHeadDim> smem{(raw + 1023u) & ~1023u};
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (threadIdx.x == 0) {
    mbarrier_init(smem.q_full(), 1);
    for (int stage = 0; stage < Tr::kStages; ++stage) {
      mbarrier_init(smem.k_full(stage), 1);
      mbarrier_init(smem.v_full(stage), 1);
      // Every consumer warp releases a slot once its wgmma have read it.
      mbarrier_init(smem.k_empty(stage), kConsumerWarpgroups * 4);
      mbarrier_init(smem.v_empty(stage), kConsumerWarpgroups * 4);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // 24 registers suffice to issue copies; the consumers take the rest (2 x 128 x 240 + 128 x 24
    // fits the 64 K registers of an SM).
    set_max_registers<24, false>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&p.tmap_q);
      prefetch_tensor_map(&p.tmap_k);
      prefetch_tensor_map(&p.tmap_v);
      produce<kHeadDim>(p, b, smem);
    }
  } else {
    set_max_registers<240, true>();
    consume<T, kHeadDim>(p, b, smem, warpgroup - 1);
  }
}

template <DType kDType, int kHeadDim>
void run_fwd(const FwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  constexpr int kSmem = static_cast<int>(fwd_smem_bytes(kHeadDim));
  auto* kernel = &fwd_kernel<T, kHeadDim>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm90 forward)");
  const long long blocks = static_cast<long long>(params.num_m_blocks) * params.shape.batch *
                           params.shape.heads;
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSmem, static_cast<cudaStream_t>(stream)>>>(
      params);
  cuda_check(cudaGetLastError(), "the sm90 forward kernel launch");
}

}  // namespace flashvision::detail::sm90
