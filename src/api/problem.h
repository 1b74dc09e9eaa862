// The validated, normalized form of a call that every backend consumes.
//
// Validation (validate.cpp) turns the public argument structs into a Problem once; backends never
// re-check arguments and never look at TensorView shapes. Dense and varlen calls share one
// description: a tensor is addressed by (sequence, row, head) element strides, and in varlen mode
// the sequence stride is 0 and rows are offset by cu_seqlens.
#pragma once

#include <cstdint>

#include "flashvision/args.h"

namespace flashvision::detail {

/// A [sequence, row, head, dim] operand with a contiguous dim; strides are in elements.
struct Operand {
  void* data = nullptr;
  int64_t seq_stride = 0;   ///< between sequences (0 in varlen mode)
  int64_t row_stride = 0;   ///< between tokens
  int64_t head_stride = 0;  ///< between heads

  template <typename T>
  T* at(int64_t seq, int64_t row, int64_t head) const {
    return static_cast<T*>(data) + seq * seq_stride + row * row_stride + head * head_stride;
  }
};

/// The float32 log-sum-exp, addressed by (sequence, head, row).
struct LseOperand {
  float* data = nullptr;  ///< nullptr when the caller did not ask for it (forward only)
  int64_t seq_stride = 0;
  int64_t head_stride = 0;
  int64_t row_stride = 0;

  float* at(int64_t seq, int64_t head, int64_t row) const {
    return data + seq * seq_stride + head * head_stride + row * row_stride;
  }
};

/// Row ranges of one sequence.
struct SeqBounds {
  int64_t q_begin = 0;  ///< first row of this sequence in q/out/lse/dout/dq
  int64_t q_len = 0;
  int64_t k_begin = 0;  ///< first row of this sequence in k/v/dk/dv
  int64_t k_len = 0;
};

/// A validated attention problem.
struct Problem {
  DType dtype = DType::f32;      ///< storage dtype of q, k, v (and out, dout, dq, dk, dv but FP8's)
  DType out_dtype = DType::f32;  ///< storage dtype of out: dtype, or bf16 for f8e4m3 inputs
  /// f8e4m3 inputs: what V's stored values are multiplied by (Q's and K's factors are in scale).
  float descale_v = 1.0f;
  Device device = Device::cpu;
  int device_index = 0;
  int64_t batch = 0;     ///< number of sequences
  int64_t heads = 0;     ///< query heads H
  int64_t heads_kv = 0;  ///< key/value heads Hkv (H % Hkv == 0)
  int64_t head_dim = 0;  ///< D
  int64_t seqlen_q = 0;  ///< Nq (dense) or the longest query sequence (varlen)
  int64_t seqlen_k = 0;  ///< Nk (dense) or the longest key sequence (varlen)
  int64_t total_q = 0;   ///< rows of q over all sequences
  int64_t total_k = 0;   ///< rows of k over all sequences
  float scale = 0.0f;    ///< resolved softmax scale (never 0)
  bool causal = false;   ///< bottom-right aligned causal mask
  bool varlen = false;
  const int32_t* cu_seqlens_q = nullptr;  ///< varlen: B + 1 offsets (in the tensors' memory)
  const int32_t* cu_seqlens_k = nullptr;
  void* stream = nullptr;
  int num_threads = 0;
  bool deterministic = false;
  void* workspace = nullptr;  ///< backward on CUDA: caller's scratch (nullptr: allocate)
  std::size_t workspace_bytes = 0;

  Operand q, k, v, out;  ///< forward and backward
  LseOperand lse;
  Operand dout, dq, dk, dv;  ///< backward only

  /// Query heads that share one key/value head.
  int64_t group_size() const { return heads / heads_kv; }

  /// Row ranges of sequence `seq`; cu_seqlens must be host-readable (CPU backend).
  SeqBounds bounds(int64_t seq) const {
    if (!varlen) return {0, seqlen_q, 0, seqlen_k};
    const int64_t q0 = cu_seqlens_q[seq], k0 = cu_seqlens_k[seq];
    return {q0, cu_seqlens_q[seq + 1] - q0, k0, cu_seqlens_k[seq + 1] - k0};
  }

  /// Last key column (exclusive) row `row` may see under the causal mask, for a sequence with
  /// q_len queries and k_len keys; k_len when not causal.
  int64_t visible_keys(int64_t row, int64_t q_len, int64_t k_len) const {
    if (!causal) return k_len;
    const int64_t limit = row + 1 + k_len - q_len;
    return limit < 0 ? 0 : (limit > k_len ? k_len : limit);
  }
};

/// Validates forward arguments and normalizes them (throws flashvision::Error).
Problem make_forward_problem(const ForwardArgs& args);
/// Validates backward arguments and normalizes them (throws flashvision::Error).
Problem make_backward_problem(const BackwardArgs& args);

}  // namespace flashvision::detail
