// The naive baseline: softmax(q k^T * scale) v with the whole score matrix S in memory.
#pragma once

#include <cstdint>

#include "bench_cases.h"
#include "flashvision/tensor.h"

namespace flashvision::tool {

/// Operands of the naive path, in the device's memory, all of element type `dtype` (see
/// BenchDevice::naive_dtype). q, out, dout, dq are [B, Nq, H, D] and k, v, dk, dv are
/// [B, Nk, H, D], all contiguous.
struct NaiveProblem {
  Shape shape;
  float scale = 0.0f;
  bool causal = false;       ///< bottom-right aligned, as flashvision
  DType dtype = DType::f32;  ///< of every operand; the CPU path takes f32 only
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  const void* dout = nullptr;  ///< backward only
  void* dq = nullptr;          ///< backward only
  void* dk = nullptr;          ///< backward only
  void* dv = nullptr;          ///< backward only
};

/// Bytes the CPU naive path allocates: B H Nq Nk floats for S (kept as P for the backward), one
/// Nq x Nk dP buffer per concurrently processed head in the backward, and K (then V) packed
/// into key panels.
int64_t cpu_naive_buffer_bytes(const Shape& shape, bool backward, int threads);

/// out = softmax(q k^T * scale) v on the CPU, OpenMP over (b, h, row block).
void cpu_naive_forward(const NaiveProblem& problem);

/// The forward above (keeping P), then dq, dk, dv from dout through dP and dS.
void cpu_naive_forward_backward(const NaiveProblem& problem);

}  // namespace flashvision::tool
