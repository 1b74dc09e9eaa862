// Argument structs of the two entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "flashvision/tensor.h"

namespace flashvision {

/// Which implementation runs a call.
enum class Backend : int {
  automatic,  ///< the fastest backend available for the tensors' device
  cpu,        ///< the CPU backend (tensors must be on the CPU)
  cuda_sm80,  ///< the portable CUDA backend (mma.sync)
  cuda_sm90,  ///< the Hopper backend (TMA + wgmma)
};

/// Options shared by forward and backward.
///
/// Dense mode: q [B, Nq, H, D], k and v [B, Nk, Hkv, D], out [B, Nq, H, D], lse [B, H, Nq].
/// Varlen (packed) mode, chosen by setting cu_seqlens_q and cu_seqlens_k: q [total_q, H, D],
/// k and v [total_k, Hkv, D], out [total_q, H, D], lse [H, total_q]; sequence b owns rows
/// cu_seqlens_q[b] .. cu_seqlens_q[b+1] of q and likewise of k and v.
/// Any strides are accepted as long as the last (head) dimension is contiguous.
struct AttentionOptions {
  float softmax_scale = 0.0f;  ///< multiplier of QK^T, any finite value; 0 means 1/sqrt(D)
  /// Causal mask aligned to the bottom-right corner (as flash-attn >= 2.1): query row i may see key
  /// j when j <= i + Nk - Nq. Rows that see no key output 0 and have lse = -inf.
  bool causal = false;
  TensorView cu_seqlens_q;  ///< int32 [B + 1], non-decreasing, from 0 to total_q (varlen)
  TensorView cu_seqlens_k;  ///< int32 [B + 1], non-decreasing, from 0 to total_k (varlen)
  int max_seqlen_q = 0;     ///< varlen: longest query sequence (0: computed on CPU tensors)
  int max_seqlen_k = 0;     ///< varlen: longest key sequence (0: computed on CPU tensors)
  void* stream = nullptr;   ///< cudaStream_t for CUDA tensors (nullptr: the default stream)
  Backend backend = Backend::automatic;  ///< force a backend (tests, benchmarks)
  int num_threads = 0;                   ///< CPU backend: threads to use (0: all OpenMP threads)
};

/// Arguments of forward(): out = softmax(q k^T * scale) v, and optionally its log-sum-exp.
///
/// FP8: q, k and v may be f8e4m3 (dense, a non-negative softmax_scale; on CUDA a Hopper GPU and
/// head dims that are multiples of 16 up to 256, on the CPU any head dim, decoded to float32: a
/// reference, not a fast path); out is then bf16. Each tensor stands for its stored values times
/// its descale factor, so the call computes softmax(q k^T * descale_q * descale_k * scale)
/// v * descale_v, and the lse is that of the real scores.
struct ForwardArgs : AttentionOptions {
  TensorView q;    ///< queries
  TensorView k;    ///< keys
  TensorView v;    ///< values
  TensorView out;  ///< output, same shape and dtype as q (bf16 for f8e4m3 inputs; written)
  TensorView lse;  ///< optional float32 log-sum-exp per query row (natural log; written)
  /// f8e4m3 inputs: per-tensor factors of q, k and v (finite, > 0); 1 for any other dtype.
  float descale_q = 1.0f;
  float descale_k = 1.0f;
  float descale_v = 1.0f;
};

/// Arguments of backward(): gradients of forward() given dout.
struct BackwardArgs : AttentionOptions {
  TensorView q;                ///< queries of the forward call
  TensorView k;                ///< keys of the forward call
  TensorView v;                ///< values of the forward call
  TensorView out;              ///< output of the forward call
  TensorView lse;              ///< float32 log-sum-exp the forward call wrote (required)
  TensorView dout;             ///< gradient of the loss with respect to out
  TensorView dq;               ///< gradient with respect to q (written)
  TensorView dk;               ///< gradient with respect to k (written; summed over each GQA group)
  TensorView dv;               ///< gradient with respect to v (written; summed over each GQA group)
  bool deterministic = false;  ///< GPU backends: bitwise reproducible dq (slower)
  /// CUDA: scratch memory for the call (dQ accumulator, rowsum(dO∘O), partial dK/dV): at least
  /// backward_workspace_size(args) bytes on the tensors' device, 256-byte aligned, not used by
  /// anything else until the call's work on `stream` has completed. nullptr: the call takes it
  /// with cudaMallocAsync on `stream` and frees it after its kernels — stream-ordered, but a
  /// driver call per backward that costs tens of microseconds when the memory pool has given its
  /// memory back; callers with their own allocator (PyTorch's) pass a buffer instead.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;  ///< size of `workspace` in bytes
};

}  // namespace flashvision
