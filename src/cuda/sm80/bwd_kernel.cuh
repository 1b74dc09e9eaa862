// sm80 backward main kernel: one CTA per (key block, kv head, sequence) walks the query blocks of
// every query head of its GQA group. Per query block it recomputes P^T = exp(scale K Q^T - LSE)
// and dP^T = V dO^T with warps splitting the keys, stages P^T and dS^T = P^T (dP^T - D) in shared
// memory, accumulates dV += P^T dO and dK += dS^T Q in registers, and adds dQ = dS K into an fp32
// workspace (atomics, or ordered read-modify-write in deterministic mode).
// When (key blocks x kv heads x sequences) cannot fill the GPU, the host splits the query blocks
// over num_splits CTAs per key block: each walks a contiguous share and writes fp32 partial dK, dV
// that the reduce kernel (bwd_aux.cu) sums in split order.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

#include "cuda/common/cuda_check.h"
#include "cuda/common/dtype_map.cuh"
#include "cuda/common/tile_io.cuh"
#include "cuda/common/warp_gemm.cuh"
#include "cuda/sm80/launch.h"
#include "cuda/sm80/tile_config.h"

namespace flashvision::detail::sm80 {

/// Compile-time geometry of the backward kernel for one head-dim bucket.
template <int kHeadDim>
struct BwdTraits {
  static constexpr BwdTile kTile = bwd_tile(kHeadDim);
  static constexpr int kBlockM = kTile.block_m;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kWarps = kTile.warps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kLd = padded(kHeadDim);  // pitch of K, V, Q, dO tiles
  static constexpr int kLdM = padded(kBlockM);  // pitch of the P^T and dS^T tiles
  // S^T, dP^T and dK, dV: warps split the keys in 16-row groups, the rest split the other side.
  static constexpr int kKeyGroups = kBlockN / 16 < kWarps ? kBlockN / 16 : kWarps;
  static constexpr int kSplit = kWarps / kKeyGroups;
  static constexpr int kQueriesPerWarp = kBlockM / kSplit;  // of S^T and dP^T
  static constexpr int kDimsPerWarp = kHeadDim / kSplit;    // of dK and dV
  // dQ: warps split the queries in 16-row groups and the head dim in the rest.
  static constexpr int kQueryGroups = kBlockM / 16;
  static constexpr int kDqDimsPerWarp = kHeadDim / (kWarps / kQueryGroups);
  static_assert(kKeyGroups * 16 == kBlockN, "one 16-key tile per warp row");
  static_assert(kQueriesPerWarp % 8 == 0 && kDimsPerWarp % 8 == 0 && kDqDimsPerWarp % 8 == 0);
};

/// Shared-memory carve-up of the backward kernel.
template <typename T, int kHeadDim>
struct BwdSmem {
  using Tr = BwdTraits<kHeadDim>;
  T* k;
  T* v;
  T* q;
  T* dout;
  T* pt;   ///< P^T [kBlockN][kLdM]
  T* dst;  ///< dS^T [kBlockN][kLdM]
  float* lse_log2;  ///< LSE * log2(e) of the block's rows (+inf for rows that get no gradient)
  float* dvec;      ///< rowsum(dO * O) of the block's rows

  __device__ explicit BwdSmem(unsigned char* raw) {
    k = reinterpret_cast<T*>(raw);
    v = k + Tr::kBlockN * Tr::kLd;
    q = v + Tr::kBlockN * Tr::kLd;
    dout = q + Tr::kBlockM * Tr::kLd;
    pt = dout + Tr::kBlockM * Tr::kLd;
    dst = pt + Tr::kBlockN * Tr::kLdM;
    lse_log2 = reinterpret_cast<float*>(dst + Tr::kBlockN * Tr::kLdM);
    dvec = lse_log2 + Tr::kBlockM;
  }
};

/// One query block's inputs: Q and dO asynchronously, LSE and D with plain loads.
template <typename T, int kHeadDim>
__device__ __forceinline__ void load_query_block(const BwdParams& p, const BwdSmem<T, kHeadDim>& sm,
                                                 const SeqRange& r, int seq, int head, int m0) {
  using Tr = BwdTraits<kHeadDim>;
  const int rows_valid = min(Tr::kBlockM, r.q_len - m0);
  const int64_t row = r.q_begin + m0;
  load_tile_async<T, Tr::kBlockM, kHeadDim, Tr::kThreads>(
      sm.q, operand_at<const T>(p.q, seq, row, head), p.q.row_stride, rows_valid,
      p.shape.head_dim, p.q.data);
  load_tile_async<T, Tr::kBlockM, kHeadDim, Tr::kThreads>(
      sm.dout, operand_at<const T>(p.dout, seq, row, head), p.dout.row_stride, rows_valid,
      p.shape.head_dim, p.dout.data);
  for (int i = static_cast<int>(threadIdx.x); i < Tr::kBlockM; i += Tr::kThreads) {
    float lse2 = INFINITY, d = 0.0f;
    if (i < rows_valid) {
      const float lse = p.lse[seq * p.lse_seq_stride + head * p.lse_head_stride +
                              (row + i) * p.lse_row_stride];
      // A row that saw no key (lse = -inf) has P = 0 everywhere: +inf makes exp2 give exactly 0.
      lse2 = lse == -INFINITY ? INFINITY : lse * static_cast<float>(M_LOG2E);
      d = p.dvec[head * p.accum_rows + r.q_ws_row + m0 + i];
    }
    sm.lse_log2[i] = lse2;
    sm.dvec[i] = d;
  }
}

/// P^T and dS^T of one query block into shared memory (warps split keys x queries).
template <typename T, int kHeadDim>
__device__ __forceinline__ void probabilities_and_ds(const BwdParams& p,
                                                     const BwdSmem<T, kHeadDim>& sm,
                                                     const SeqRange& r, int n0, int m0) {
  using Tr = BwdTraits<kHeadDim>;
  constexpr int kNT = Tr::kQueriesPerWarp / 8;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int key0 = (warp % Tr::kKeyGroups) * 16, query0 = (warp / Tr::kKeyGroups) * kNT * 8;
  float s[1][kNT][4], dp[1][kNT][4];
  clear(s);
  clear(dp);
  warp_gemm_ss<T, 1, kNT, kHeadDim, false, false>(s, ptx::smem_addr(sm.k + key0 * Tr::kLd),
                                                  Tr::kLd, ptx::smem_addr(sm.q + query0 * Tr::kLd),
                                                  Tr::kLd, lane);
  warp_gemm_ss<T, 1, kNT, kHeadDim, false, false>(
      dp, ptx::smem_addr(sm.v + key0 * Tr::kLd), Tr::kLd,
      ptx::smem_addr(sm.dout + query0 * Tr::kLd), Tr::kLd, lane);
  const ShapeParams& sh = p.shape;
  const bool needs_mask = n0 + Tr::kBlockN > r.k_len ||
                          (sh.causal && n0 + Tr::kBlockN - 1 > m0 + r.k_len - r.q_len);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = key0 + lane / 4 + half * 8;
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      float prob[2], ds[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int query = query0 + n * 8 + 2 * (lane % 4) + e;
        float pr = ptx::exp2_approx(fmaf(s[0][n][2 * half + e], sh.scale_log2, -sm.lse_log2[query]));
        if (needs_mask) {
          const int limit = sh.causal ? m0 + query + 1 + r.k_len - r.q_len : r.k_len;
          if (n0 + key >= min(limit, r.k_len)) pr = 0.0f;
        }
        prob[e] = pr;
        ds[e] = pr * (dp[0][n][2 * half + e] - sm.dvec[query]);
      }
      const int col = query0 + n * 8 + 2 * (lane % 4);
      *reinterpret_cast<uint32_t*>(sm.pt + key * Tr::kLdM + col) = ptx::pack2<T>(prob[0], prob[1]);
      *reinterpret_cast<uint32_t*>(sm.dst + key * Tr::kLdM + col) = ptx::pack2<T>(ds[0], ds[1]);
    }
  }
}

/// dQ of one query block = dS K, added into the fp32 workspace.
template <typename T, int kHeadDim>
__device__ __forceinline__ void accumulate_dq(const BwdParams& p, const BwdSmem<T, kHeadDim>& sm,
                                              const SeqRange& r, int head, int m0) {
  using Tr = BwdTraits<kHeadDim>;
  constexpr int kNT = Tr::kDqDimsPerWarp / 8;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int query0 = (warp % Tr::kQueryGroups) * 16, dim0 = (warp / Tr::kQueryGroups) * kNT * 8;
  float dq[1][kNT][4];
  clear(dq);
  warp_gemm_ss<T, 1, kNT, Tr::kBlockN, true, true>(dq, ptx::smem_addr(sm.dst + query0), Tr::kLdM,
                                                   ptx::smem_addr(sm.k + dim0), Tr::kLd, lane);
  const int head_dim = p.shape.head_dim;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = query0 + lane / 4 + half * 8;
    if (m0 + row >= r.q_len) continue;
    float* dst = p.dq_accum + (head * p.accum_rows + r.q_ws_row + m0 + row) * head_dim;
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      const int col = dim0 + n * 8 + 2 * (lane % 4);
      if (col >= head_dim) continue;
      if (p.deterministic) {
        // Only this thread of this CTA ever touches these elements, in a fixed order.
        dst[col] += dq[0][n][2 * half];
        dst[col + 1] += dq[0][n][2 * half + 1];
      } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        // Hopper adds a float2 in one atomic: half the atomic traffic, which bounds this loop.
        atomicAdd(reinterpret_cast<float2*>(dst + col),
                  make_float2(dq[0][n][2 * half], dq[0][n][2 * half + 1]));
#else
        atomicAdd(dst + col, dq[0][n][2 * half]);
        atomicAdd(dst + col + 1, dq[0][n][2 * half + 1]);
#endif
      }
    }
  }
}

/// Writes a warp's dK or dV rows (times `scale`) for keys < keys_valid, columns < head_dim.
template <typename T, int kNT>
__device__ __forceinline__ void store_kv_grad(const TensorParams& t, const float (&acc)[1][kNT][4],
                                              float scale, int seq, int64_t first_row,
                                              int head_kv, int key0, int dim0, int keys_valid,
                                              int head_dim, int lane) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = key0 + lane / 4 + half * 8;
    if (key >= keys_valid) continue;
    T* row = operand_at<T>(t, seq, first_row + key, head_kv);
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      const int col = dim0 + n * 8 + 2 * (lane % 4);
      if (col < head_dim) {
        *reinterpret_cast<uint32_t*>(row + col) =
            ptx::pack2<T>(acc[0][n][2 * half] * scale, acc[0][n][2 * half + 1] * scale);
      }
    }
  }
}

/// Writes a warp's fp32 partial dK or dV rows (keys < keys_valid, columns < head_dim) to the
/// rows of split workspace `ws` that start at `first_row`.
template <int kNT>
__device__ __forceinline__ void store_kv_partial(float* ws, const float (&acc)[1][kNT][4],
                                                 int64_t first_row, int key0, int dim0,
                                                 int keys_valid, int head_dim, int lane) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = key0 + lane / 4 + half * 8;
    if (key >= keys_valid) continue;
    float* row = ws + (first_row + key) * head_dim;
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
      const int col = dim0 + n * 8 + 2 * (lane % 4);
      if (col < head_dim) {
        *reinterpret_cast<float2*>(row + col) =
            make_float2(acc[0][n][2 * half], acc[0][n][2 * half + 1]);
      }
    }
  }
}

/// The CTA's query split: the fastest part of the grid. Re-read from blockIdx where needed rather
/// than kept in a register through the query loop, which runs at the register limit.
template <bool kSplit>
__device__ __forceinline__ int query_split(const BwdParams& p) {
  if (!kSplit) return 0;
  unsigned cta;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(cta));  // volatile: not hoisted out of the loop
  return static_cast<int>(cta % static_cast<unsigned>(p.num_splits));
}

/// Query blocks [first, first + count) that one CTA walks for one key block.
struct QueryBlockRange {
  int first;
  int count;
};

/// Split `split`'s contiguous share of the query blocks of key block n0: of the blocks that see
/// the key block, or, in deterministic mode, of all blocks (then a dQ row belongs to one CTA
/// whatever the key block, so its ordered read-modify-write needs no atomics), clipped to the
/// visible ones.
__device__ __forceinline__ QueryBlockRange query_block_range(const BwdParams& p, const SeqRange& r,
                                                             int n0, int split, int splits,
                                                             int block_m) {
  // Query rows that see key n0 under the causal mask start at n0 - (k_len - q_len).
  const int first_row = p.shape.causal ? max(0, n0 - (r.k_len - r.q_len)) : 0;
  const int visible = first_row / block_m;
  const int total = (r.q_len + block_m - 1) / block_m;
  const int base = p.deterministic ? 0 : visible;
  const int64_t span = max(0, total - base);
  const int begin = base + static_cast<int>(span * split / splits);
  const int end = base + static_cast<int>(span * (split + 1) / splits);
  const int first = max(begin, visible);
  return {first, max(0, end - first)};
}

/// dK and dV of one key block of one kv head (over the CTA's query split). kSplit: written as
/// fp32 partials; a template parameter so that the unsplit kernel keeps its registers (the query
/// loop runs at the 255-register limit, and the second store path cost spill bytes).
template <typename T, int kHeadDim, bool kSplit>
__device__ __forceinline__ void bwd_key_block(const BwdParams& p, const BwdSmem<T, kHeadDim>& sm,
                                              int n_block, int seq, int head_kv) {
  using Tr = BwdTraits<kHeadDim>;
  constexpr int kNT = Tr::kDimsPerWarp / 8;
  const ShapeParams& sh = p.shape;
  const SeqRange r = seq_range(sh, seq);
  const int n0 = n_block * Tr::kBlockN;
  if (n0 >= r.k_len) return;
  const int keys_valid = min(Tr::kBlockN, r.k_len - n0);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int key0 = (warp % Tr::kKeyGroups) * 16, dim0 = (warp / Tr::kKeyGroups) * Tr::kDimsPerWarp;

  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.k, operand_at<const T>(p.k, seq, r.k_begin + n0, head_kv), p.k.row_stride, keys_valid,
      sh.head_dim, p.k.data);
  load_tile_async<T, Tr::kBlockN, kHeadDim, Tr::kThreads>(
      sm.v, operand_at<const T>(p.v, seq, r.k_begin + n0, head_kv), p.v.row_stride, keys_valid,
      sh.head_dim, p.v.data);

  const QueryBlockRange range = query_block_range(p, r, n0, query_split<kSplit>(p),
                                                  kSplit ? p.num_splits : 1, Tr::kBlockM);
  const int m_first = range.first, m_count = range.count;
  const int steps = m_count * sh.group;

  float acc_dk[1][kNT][4], acc_dv[1][kNT][4];
  clear(acc_dk);
  clear(acc_dv);
  if (steps > 0) {
    load_query_block(p, sm, r, seq, head_kv * sh.group, m_first * Tr::kBlockM);
  }
  ptx::cp_async_commit();
  const uint32_t pt_warp = ptx::smem_addr(sm.pt + key0 * Tr::kLdM);
  const uint32_t dst_warp = ptx::smem_addr(sm.dst + key0 * Tr::kLdM);
  for (int step = 0; step < steps; ++step) {
    const int head = head_kv * sh.group + step / m_count;
    const int m0 = (m_first + step % m_count) * Tr::kBlockM;
    ptx::cp_async_wait<0>();
    __syncthreads();  // this step's Q, dO, LSE, D are in; the last step's dS^T reads are done
    probabilities_and_ds(p, sm, r, n0, m0);
    __syncthreads();  // P^T and dS^T complete
    warp_gemm_ss<T, 1, kNT, Tr::kBlockM, false, true>(acc_dv, pt_warp, Tr::kLdM,
                                                      ptx::smem_addr(sm.dout + dim0), Tr::kLd, lane);
    warp_gemm_ss<T, 1, kNT, Tr::kBlockM, false, true>(acc_dk, dst_warp, Tr::kLdM,
                                                      ptx::smem_addr(sm.q + dim0), Tr::kLd, lane);
    __syncthreads();  // Q, dO, P^T free: the next block's loads overlap dQ
    if (step + 1 < steps) {
      const int next_head = head_kv * sh.group + (step + 1) / m_count;
      load_query_block(p, sm, r, seq, next_head, (m_first + (step + 1) % m_count) * Tr::kBlockM);
      ptx::cp_async_commit();
    }
    accumulate_dq(p, sm, r, head, m0);
  }
  ptx::cp_async_wait<0>();
  if constexpr (kSplit) {
    // Partial rows: kv-head-major per split, sequences stacked (dense) or packed (varlen).
    const int64_t seq_row = sh.cu_seqlens_k != nullptr ? r.k_begin : int64_t{seq} * sh.seqlen_k;
    const int64_t first =
        (int64_t{query_split<kSplit>(p)} * sh.heads_kv + head_kv) * p.partial_rows + seq_row + n0;
    store_kv_partial<kNT>(p.dk_partial, acc_dk, first, key0, dim0, keys_valid, sh.head_dim, lane);
    store_kv_partial<kNT>(p.dv_partial, acc_dv, first, key0, dim0, keys_valid, sh.head_dim, lane);
  } else {
    store_kv_grad<T, kNT>(p.dk, acc_dk, sh.scale, seq, r.k_begin + n0, head_kv, key0, dim0,
                          keys_valid, sh.head_dim, lane);
    store_kv_grad<T, kNT>(p.dv, acc_dv, 1.0f, seq, r.k_begin + n0, head_kv, key0, dim0,
                          keys_valid, sh.head_dim, lane);
  }
  __syncthreads();  // the next key block of this CTA reuses the K, V and dS^T tiles
}

/// Grid: (query split, key block, kv head, sequence) folded into x, the split fastest; in
/// deterministic mode one CTA per (query split, kv head, sequence) walks all key blocks so that
/// dQ is summed in a fixed order.
template <typename T, int kHeadDim, bool kSplit>
__global__ void __launch_bounds__(BwdTraits<kHeadDim>::kThreads)
    bwd_kernel(const __grid_constant__ BwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BwdSmem<T, kHeadDim> sm(smem_raw);
  const int tile = static_cast<int>(kSplit ? blockIdx.x / p.num_splits : blockIdx.x);
  const int blocks_per_head = p.deterministic ? 1 : p.num_n_blocks;
  const int bh = tile / blocks_per_head;
  const int head_kv = bh % p.shape.heads_kv, seq = bh / p.shape.heads_kv;
  const int n_first = p.deterministic ? 0 : tile % blocks_per_head;
  const int n_last = p.deterministic ? p.num_n_blocks : n_first + 1;
  for (int n_block = n_first; n_block < n_last; ++n_block) {
    bwd_key_block<T, kHeadDim, kSplit>(p, sm, n_block, seq, head_kv);
  }
}

template <DType kDType, int kHeadDim>
void run_bwd(const BwdParams& params, void* stream) {
  using T = typename CudaElement<kDType>::type;
  using Tr = BwdTraits<kHeadDim>;
  constexpr int kSmem = static_cast<int>(bwd_smem_bytes(kHeadDim));
  auto* kernel = params.num_splits > 1 ? &bwd_kernel<T, kHeadDim, true>
                                        : &bwd_kernel<T, kHeadDim, false>;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
             "cudaFuncSetAttribute (sm80 backward)");
  const long long blocks = static_cast<long long>(params.deterministic ? 1 : params.num_n_blocks) *
                           params.shape.batch * params.shape.heads_kv * params.num_splits;
  kernel<<<static_cast<unsigned>(blocks), Tr::kThreads, kSmem,
           static_cast<cudaStream_t>(stream)>>>(params);
  cuda_check(cudaGetLastError(), "the sm80 backward kernel launch");
}

}  // namespace flashvision::detail::sm80
