// sm80 forward kernel (FlashAttention-2 class): one CTA per (query block, head, sequence); each warp
// owns kMTiles*16 query rows; S = Q K^T and O += P V on mma.sync with P kept in registers; K and V
// stream through shared memory with cp.async so that loading V overlaps S and loading the next K
// overlaps P V. At D = 64, 128 and 256 K and V lie unpadded and XOR-swizzled (params.h's
// FwdKvMode). When the host splits the last wave's tiles over the keys, the CTAs from split_tile0
// on each compute one key range of a tile and write a partial result for the combine
// (fwd_split_unit.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/fwd_tile_order.cuh"
#include "cuda/common/grid_dependency.cuh"
#include "cuda/common/online_softmax.cuh"
#include "cuda/common/score_mask.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/common/warp_gemm_swizzled.cuh"
#include "cuda/sm80/fwd_kv_prefetch.cuh"
#include "cuda/sm80/fwd_kv_stream.cuh"
#include "cuda/sm80/fwd_split_unit.cuh"
#include "cuda/sm80/launch.h"
#include "cuda/sm80/tile_config.h"

namespace flashvision::detail::sm80 {

/// Compile-time geometry of the forward kernel for one head-dim bucket, tile variant and K/V
/// layout (params.h's FwdKvMode).
template <int kHeadDim, int kVariant, int kKvMode = kKvPadded>
struct FwdTraits {
  static constexpr FwdTile kTile = fwd_tile(kHeadDim, kVariant);
  static constexpr int kBlockM = kTile.block_m;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kWarps = kTile.warps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRowsPerWarp = kBlockM / kWarps;
  static constexpr int kMTiles = kRowsPerWarp / 16;
  static constexpr int kLd = padded(kHeadDim);
  static constexpr bool kKvSwizzled = kKvMode != kKvPadded;
  static constexpr int kKvLd = kKvSwizzled ? kHeadDim : kLd;
  /// Swizzled K/V addresses (warp_gemm_swizzled.cuh's SwizzledB): four registers a lane where a
  /// warp owns 16 rows (no XOR per load); one where it owns 32, whose kernel is at 255 registers.
  static constexpr bool kKvLineRegisters = kMTiles == 1;
  /// A lazy max (OnlineSoftmax's kLazyMax) at the buckets where it measured faster on the H200
  /// (bench/results/2026-11-30-s18, calls 1, 3 and 4): 64, 128 and 256, +1.3..2.5 % on the D = 64,
  /// 128 and 256 sweep and SDXL. At 80 and 160 the short image cases lost (SD 1.5's 32 x 32 level
  /// -1.2 %, its 16 x 16 level -3.7 %); the other buckets were not measured.
  static constexpr bool kLazyMax = kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256;
  static_assert(kBlockM > 0, "the bucket has this tile variant");
  static_assert(!kKvSwizzled || fwd_kv_swizzle_fits(kHeadDim, kVariant));
  // The K and V tiles follow kBlockM and kBlockN padded rows: they start on 128-byte lines too.
  static_assert(!kKvSwizzled || (kBlockM * kLd * 2 % 128 == 0 && kBlockN * kLd * 2 % 128 == 0));
  static_assert(kRowsPerWarp % 16 == 0 && kBlockN % 16 == 0 && kHeadDim % 16 == 0);
};

/// Forward attention for one (query block, head, sequence), or for one key range of it.
template <typename T, int kHeadDim, int kVariant, int kKvMode>
__global__ void __launch_bounds__(FwdTraits<kHeadDim, kVariant, kKvMode>::kThreads)
    fwd_kernel(const __grid_constant__ FwdParams p) {
  using Tr = FwdTraits<kHeadDim, kVariant, kKvMode>;
  constexpr int kBlockM = Tr::kBlockM, kBlockN = Tr::kBlockN, kMTiles = Tr::kMTiles;
  constexpr int kLd = Tr::kLd, kDTiles = kHeadDim / 8;
  // Once every CTA has started, the combine of split tiles (fwd_combine.cu), queued after this
  // grid as its programmatic dependent, may start on the SMs this grid frees (sm_90 and up).
  ptx::launch_dependent_grids();
  // 128-byte aligned: the swizzled B operand's addresses XOR bits of its rows' addresses.
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* q_smem = reinterpret_cast<T*>(smem_raw);
  T* k_smem = q_smem + kBlockM * kLd;
  T* v_smem = k_smem + kBlockN * kLd;

  const ShapeParams& s = p.shape;
  // The longest query blocks (most keys under the causal mask) are scheduled first.
  const FwdTilePlace place = fwd_tile_place(fwd_cta_tile(p), p.num_m_blocks, 1);
  const int m_block = place.m_block;
  const int head = place.bh % s.heads, seq = place.bh / s.heads;
  const SeqRange r = seq_range(s, seq);
  const int m0 = m_block * kBlockM;
  if (m0 >= r.q_len) return;
  const int head_kv = head / s.group;
  const int rows_valid = min(kBlockM, r.q_len - m0);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_row0 = warp * Tr::kRowsPerWarp;

  // Keys this block can see at all: under the causal mask the last row's limit bounds the rest.
  int n_end = r.k_len;
  if (s.causal) n_end = max(0, min(r.k_len, m0 + kBlockM + r.k_len - r.q_len));
  const KeyBlockRange blocks = fwd_cta_key_blocks(p, (n_end + kBlockN - 1) / kBlockN);

  float acc_o[kMTiles][kDTiles][4];
  clear(acc_o);
  OnlineSoftmax<kMTiles, Tr::kLazyMax> softmax;
  softmax.init();

  if (blocks.end > blocks.begin) {
    // Keys are counted from the CTA's first key block (a split unit's range; 0 for a whole tile):
    // the masks compare keys with k_len and with k_len - q_len + row, which the shift leaves as
    // they were, and the loop counts down to 0 with no bound held in a register.
    const int key0 = blocks.begin * kBlockN, k_len = r.k_len - key0;
    const T* q_tile = operand_at<const T>(p.q, seq, r.q_begin + m0, head);
    const T* k_seq = operand_at<const T>(p.k, seq, r.k_begin + key0, head_kv);
    const T* v_seq = operand_at<const T>(p.v, seq, r.k_begin + key0, head_kv);
    const int64_t k_rs = p.k.row_stride, v_rs = p.v.row_stride;
    using KvStream = TileStream<T, kBlockN, kHeadDim, Tr::kThreads, Tr::kKvSwizzled>;
    const uint32_t k_base = ptx::smem_addr(k_smem), v_base = ptx::smem_addr(v_smem);
    TileStream<T, kBlockM, kHeadDim, Tr::kThreads>::load(ptx::smem_addr(q_smem), q_tile,
                                                          p.q.row_stride, rows_valid, s.head_dim,
                                                          p.q.data);
    int n0 = (blocks.end - blocks.begin - 1) * kBlockN;
    KvStream::load(k_base, k_seq + n0 * k_rs, k_rs, k_len - n0, s.head_dim, p.k.data);
    ptx::cp_async_commit();
    if (p.kv_prefetch) {
      // After the first copies, which the CTA waits for first. The slices split the key range
      // among the CTAs that walk it: the sequence's query blocks times the kv head's query heads.
      const int q_blocks = (r.q_len + kBlockM - 1) / kBlockM;
      const int keys = min(n_end - key0, (blocks.end - blocks.begin) * kBlockN);
      const KeySlice slice =
          key_slice(keys, m_block + head % s.group * q_blocks, q_blocks * s.group);
      const int thread = static_cast<int>(threadIdx.x);
      prefetch_rows_l2<T, kHeadDim, Tr::kThreads>(k_seq + slice.first * k_rs, k_rs, slice.count,
                                                  s.head_dim, thread);
      prefetch_rows_l2<T, kHeadDim, Tr::kThreads>(v_seq + slice.first * v_rs, v_rs, slice.count,
                                                  s.head_dim, thread);
    }
    const uint32_t q_warp = ptx::smem_addr(q_smem + warp_row0 * kLd);
    // Walking from the last block down puts the blocks that need masking first (a split tile's
    // partial last key block is in its last part).
    for (int n_block = blocks.end - blocks.begin - 1; n_block >= 0; --n_block) {
      n0 = n_block * kBlockN;
      ptx::cp_async_wait<0>();
      __syncthreads();  // K[n] has landed and every warp is done with V[n+1]
      KvStream::load(v_base, v_seq + n0 * v_rs, v_rs, k_len - n0, s.head_dim, p.v.data);
      ptx::cp_async_commit();

      float acc_s[kMTiles][kBlockN / 8][4];
      clear(acc_s);
      if constexpr (Tr::kKvSwizzled) {
        warp_gemm_ss_swizzled_b<T, kMTiles, kBlockN / 8, kHeadDim, false, Tr::kKvLd,
                                Tr::kKvLineRegisters>(acc_s, q_warp, kLd, k_base, lane);
      } else {
        warp_gemm_ss<T, kMTiles, kBlockN / 8, kHeadDim, false, false>(acc_s, q_warp, kLd, k_base,
                                                                      kLd, lane);
      }
      const bool needs_mask =
          n0 + kBlockN > k_len || (s.causal && n0 + kBlockN - 1 > m0 + k_len - r.q_len);
      if (needs_mask) {
        mask_scores(acc_s, m0 + warp_row0, n0, r.q_len, k_len, s.causal, lane);
      }
      softmax.update(acc_s, acc_o, s.scale_log2);
      uint32_t p_frag[kMTiles][kBlockN / 16][4];
      acc_to_a_frags<T>(p_frag, acc_s);

      ptx::cp_async_wait<0>();
      __syncthreads();  // V[n] has landed and every warp is done with K[n]
      if (n_block > 0) {
        const int next = n0 - kBlockN;
        KvStream::load(k_base, k_seq + next * k_rs, k_rs, k_len - next, s.head_dim, p.k.data);
        ptx::cp_async_commit();
      }
      if constexpr (Tr::kKvSwizzled) {
        warp_gemm_rs_swizzled_b<T, kMTiles, kDTiles, kBlockN, true, Tr::kKvLd,
                                Tr::kKvLineRegisters>(acc_o, p_frag, v_base, lane);
      } else {
        warp_gemm_rs<T, kMTiles, kDTiles, kBlockN, true>(acc_o, p_frag, v_base, kLd, lane);
      }
    }
  }

  float inv_sum[kMTiles][2], lse[kMTiles][2];
  softmax.finalize(s.scale, inv_sum, lse);
  if (const int partial = fwd_cta_partial(p); partial >= 0) {
    store_partial<kMTiles, kHeadDim, kBlockM>(p, partial, warp_row0, rows_valid, acc_o, inv_sum,
                                              lse, lane);
    return;
  }

  // Each warp stages its own rows of O in its own rows of the Q tile (only it ever read them),
  // so a warp-level barrier suffices before the 16-byte stores.
  T* o_stage = q_smem + warp_row0 * kLd;
#pragma unroll
  for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int d = 0; d < kDTiles; ++d) {
        const int col = d * 8 + 2 * (lane % 4);
        *reinterpret_cast<uint32_t*>(o_stage + row * kLd + col) =
            ptx::pack2<T>(acc_o[m][d][2 * half] * inv_sum[m][half],
                          acc_o[m][d][2 * half + 1] * inv_sum[m][half]);
      }
    }
  }
  __syncwarp();
  T* o_tile = operand_at<T>(p.out, seq, r.q_begin + m0 + warp_row0, head);
  store_tile<T, kHeadDim>(o_tile, p.out.row_stride, o_stage, Tr::kRowsPerWarp,
                          rows_valid - warp_row0, s.head_dim, lane, 32);

  if (p.lse != nullptr && lane % 4 == 0) {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_row0 + m * 16 + lane / 4 + half * 8;
        if (row < r.q_len) {
          p.lse[seq * p.lse_seq_stride + head * p.lse_head_stride +
                (r.q_begin + row) * p.lse_row_stride] = lse[m][half];
        }
      }
    }
  }
}

/// Tile variant kVariant of the forward kernel in K/V layout kKvMode, with the attributes its
/// launch needs set.
template <typename T, int kHeadDim, int kVariant, int kKvMode>
auto* configured_fwd_kernel() {
  using Tr = FwdTraits<kHeadDim, kVariant, kKvMode>;
  constexpr int kSmem = static_cast<int>(fwd_smem_bytes(kHeadDim, kVariant));
  auto* kernel = &fwd_kernel<T, kHeadDim, kVariant, kKvMode>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm80 forward)");
  if constexpr (Tr::kTile.ctas_per_sm > 1) {
    // The default carveout may leave the L1 part of the SM's 256 KiB too large for two CTAs.
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared),
               "cudaFuncSetAttribute (sm80 forward carveout)");
  }
  return kernel;
}

/// Launches tile variant kVariant of the forward kernel in K/V layout kKvMode.
template <typename T, int kHeadDim, int kVariant, int kKvMode>
void launch_fwd(const FwdParams& params, cudaStream_t stream) {
  using Tr = FwdTraits<kHeadDim, kVariant, kKvMode>;
  constexpr int kSmem = static_cast<int>(fwd_smem_bytes(kHeadDim, kVariant));
  auto* kernel = configured_fwd_kernel<T, kHeadDim, kVariant, kKvMode>();
  kernel<<<static_cast<unsigned>(forward_ctas(params)), Tr::kThreads, kSmem, stream>>>(params);
  cuda_check(cudaGetLastError(), "the sm80 forward kernel launch");
}

/// CTAs of tile variant kVariant in K/V layout kKvMode one SM of the current device runs at a
/// time, as the launch configures the kernel: its registers, which only ptxas knows, decide it as
/// much as the tile.
template <typename T, int kHeadDim, int kVariant, int kKvMode>
int ctas_per_sm() {
  int ctas = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                 &ctas, configured_fwd_kernel<T, kHeadDim, kVariant, kKvMode>(),
                 FwdTraits<kHeadDim, kVariant, kKvMode>::kThreads,
                 static_cast<int>(fwd_smem_bytes(kHeadDim, kVariant))),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor (sm80 forward)");
  return ctas;
}

/// Calls `f` with the kernel of tile variant kVariant in the K/V layout `kv_mode` as a
/// std::integral_constant; the swizzled layout is instantiated only where the variant has it.
template <int kHeadDim, int kVariant, typename F>
decltype(auto) in_kv_layout(int kv_mode, F&& f) {
  if constexpr (fwd_kv_swizzle_fits(kHeadDim, kVariant)) {
    if (kv_mode == kKvSwizzled) return f(std::integral_constant<int, kKvSwizzled>{});
  }
  return f(std::integral_constant<int, kKvPadded>{});
}

/// Calls `f` with tile variant `tile_variant` and K/V layout `kv_mode` as std::integral_constants;
/// variants the bucket lacks are not instantiated.
template <int kHeadDim, typename F>
decltype(auto) in_tile(int tile_variant, int kv_mode, F&& f) {
  if constexpr (fwd_tile(kHeadDim, 1).block_m > 0) {
    if (tile_variant == 1) {
      return in_kv_layout<kHeadDim, 1>(
          kv_mode, [&](auto mode) { return f(std::integral_constant<int, 1>{}, mode); });
    }
  }
  return in_kv_layout<kHeadDim, 0>(
      kv_mode, [&](auto mode) { return f(std::integral_constant<int, 0>{}, mode); });
}

/// The forward kernel in the tile variant and K/V layout the host chose (params.tile_variant,
/// params.kv_mode).
template <DType kDType, int kHeadDim>
void run_fwd(const FwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  auto* s = static_cast<cudaStream_t>(stream);
  in_tile<kHeadDim>(params.tile_variant, params.kv_mode, [&](auto variant, auto mode) {
    launch_fwd<T, kHeadDim, decltype(variant)::value, decltype(mode)::value>(params, s);
  });
}

/// CTAs per SM of the forward kernel in tile variant `tile_variant` and K/V layout `kv_mode`.
template <DType kDType, int kHeadDim>
int fwd_ctas_per_sm(int tile_variant, int kv_mode) {
  using T = typename CudaElement<kDType>::type;
  return in_tile<kHeadDim>(tile_variant, kv_mode, [](auto variant, auto mode) {
    return ctas_per_sm<T, kHeadDim, decltype(variant)::value, decltype(mode)::value>();
  });
}

}  // namespace flashvision::detail::sm80
