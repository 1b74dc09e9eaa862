// The naive baseline on a CUDA device, as PyTorch eager runs softmax(q @ k.T * scale) @ v: cuBLAS
// GEMMs in the operands' dtype with fp32 accumulation, S materialized in fp32, a row softmax that
// writes P in the operands' dtype, and the backward through dP and dS.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "bench_cases.h"
#include "flashvision/tensor.h"
#include "naive_attention.h"

struct cublasContext;  // cublasHandle_t, kept out of this header

namespace flashvision::tool {

/// The naive path on one stream. Its score buffers come from cudaMallocAsync on that stream, so
/// the device's memory pool counts them like flashvision's own stream-ordered workspace.
class CudaNaive {
 public:
  /// A cuBLAS handle bound to `stream`, with its own workspace (allocated now, not while timed).
  explicit CudaNaive(cudaStream_t stream);
  ~CudaNaive();
  CudaNaive(const CudaNaive&) = delete;
  CudaNaive& operator=(const CudaNaive&) = delete;

  /// Bytes of S (fp32) and P (`dtype`); the backward reuses them for dP and dS.
  static int64_t buffer_bytes(const Shape& shape, DType dtype);

  /// out = softmax(q k^T * scale) v, enqueued on the stream.
  void forward(const NaiveProblem& problem);
  /// The forward, then dq, dk, dv from dout, enqueued on the stream.
  void forward_backward(const NaiveProblem& problem);

 private:
  cudaStream_t stream_;
  cublasContext* handle_ = nullptr;
  void* workspace_ = nullptr;
};

}  // namespace flashvision::tool
