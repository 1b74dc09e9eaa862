#include "naive_cuda.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "flashvision/error.h"

namespace flashvision::tool {

namespace {

// cuBLAS's advice for Hopper; given explicitly so that no GEMM allocates while it is timed.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
constexpr int kMaxRowThreads = 256;
constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int64_t kMaxRowBlocks = int64_t{1} << 20;  // grid-stride beyond this many rows

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(std::string("naive path: CUDA error in ") + what + ": " +
                cudaGetErrorString(status));
  }
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("naive path: cuBLAS error in ") + what + ": " +
                cublasGetStatusString(status));
  }
}

[[noreturn]] void unsupported(DType dtype) {
  throw Error(std::string("naive path: operands of dtype ") + to_string(dtype) +
              ", expected f32, bf16 or f16");
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return CUDA_R_32F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f16: return CUDA_R_16F;
    default: unsupported(dtype);
  }
}

/// Calls fn with a value of the device element type of `dtype`.
template <typename Fn>
void with_element_type(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: fn(float{}); return;
    case DType::bf16: fn(__nv_bfloat16{}); return;
    case DType::f16: fn(__half{}); return;
    default: unsupported(dtype);
  }
}

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float to_float(__half x) { return __half2float(x); }

template <typename T>
__device__ T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ inline __half from_float<__half>(float x) {
  return __float2half(x);
}

/// Keys row `row` sees: all, or bottom-right aligned causal as flashvision.
__device__ inline int64_t visible_keys(int64_t row, int64_t seqlen_q, int64_t seqlen_k,
                                       bool causal) {
  if (!causal) return seqlen_k;
  const int64_t last = row + 1 + seqlen_k - seqlen_q;
  return last < 0 ? 0 : (last > seqlen_k ? seqlen_k : last);
}

/// Running max and sum of exp(x - max) over a share of a row.
struct SoftmaxState {
  float max = -INFINITY;
  float sum = 0.0f;

  __device__ void add(float x) {
    if (x > max) {
      sum = sum * expf(max - x) + 1.0f;
      max = x;
    } else {
      sum += expf(x - max);
    }
  }
  __device__ void merge(SoftmaxState other) {
    const float joint = fmaxf(max, other.max);
    if (joint == -INFINITY) return;  // both shares empty (a row that sees no key)
    sum = sum * expf(max - joint) + other.sum * expf(other.max - joint);
    max = joint;
  }
};

/// The state of the whole row, in every thread of the block.
__device__ SoftmaxState block_merge(SoftmaxState state) {
  __shared__ float maxes[kMaxRowThreads / kWarpSize];
  __shared__ float sums[kMaxRowThreads / kWarpSize];
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    state.merge({__shfl_xor_sync(kFullMask, state.max, offset),
                 __shfl_xor_sync(kFullMask, state.sum, offset)});
  }
  if (threadIdx.x % kWarpSize == 0) {
    maxes[threadIdx.x / kWarpSize] = state.max;
    sums[threadIdx.x / kWarpSize] = state.sum;
  }
  __syncthreads();
  SoftmaxState total;
  for (unsigned w = 0; w < blockDim.x / kWarpSize; ++w) total.merge({maxes[w], sums[w]});
  __syncthreads();  // the next row of this block overwrites the shared partials
  return total;
}

/// The sum over the block, in every thread.
__device__ float block_sum(float value) {
  __shared__ float partials[kMaxRowThreads / kWarpSize];
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(kFullMask, value, offset);
  if (threadIdx.x % kWarpSize == 0) partials[threadIdx.x / kWarpSize] = value;
  __syncthreads();
  float total = 0.0f;
  for (unsigned w = 0; w < blockDim.x / kWarpSize; ++w) total += partials[w];
  __syncthreads();
  return total;
}

/// P = softmax of each row of S over its visible keys, 0 for the hidden ones (and for every key of
/// a row that sees none). One block per row; S and P are [B, H, Nq, Nk].
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_rows(const float* scores, T* probs, int64_t rows, int64_t seqlen_q, int64_t seqlen_k,
                 bool causal) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* s = scores + row * seqlen_k;
    T* p = probs + row * seqlen_k;
    const int64_t visible = visible_keys(row % seqlen_q, seqlen_q, seqlen_k, causal);
    SoftmaxState state;
    for (int64_t c = threadIdx.x; c < visible; c += blockDim.x) state.add(s[c]);
    state = block_merge(state);
    const float inv_sum = state.sum > 0.0f ? 1.0f / state.sum : 0.0f;
    for (int64_t c = threadIdx.x; c < seqlen_k; c += blockDim.x)
      p[c] = from_float<T>(c < visible ? expf(s[c] - state.max) * inv_sum : 0.0f);
  }
}

/// dS = P * (dP - delta) with delta = rowsum(dO * O), written over P (hidden keys have P = 0 and
/// get dS = 0). dP is fp32 [B, H, Nq, Nk]; out and dout are [B, Nq, H, D].
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_grad_rows(const float* dprobs, T* probs_then_grads, const T* out, const T* dout,
                      int64_t rows, int64_t seqlen_q, int64_t seqlen_k, int64_t heads,
                      int64_t head_dim) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t bh = row / seqlen_q, r = row % seqlen_q;
    const int64_t token = ((bh / heads) * seqlen_q + r) * heads + bh % heads;
    float partial = 0.0f;
    for (int64_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
      partial += to_float(dout[token * head_dim + d]) * to_float(out[token * head_dim + d]);
    }
    const float delta = block_sum(partial);
    const float* dp = dprobs + row * seqlen_k;
    T* p = probs_then_grads + row * seqlen_k;
    for (int64_t c = threadIdx.x; c < seqlen_k; c += blockDim.x)
      p[c] = from_float<T>(to_float(p[c]) * (dp[c] - delta));
  }
}

/// Threads per row: a power of two from one warp to kMaxRowThreads, about four keys each.
int row_threads(int64_t seqlen_k) {
  int threads = kWarpSize;
  while (threads < kMaxRowThreads && int64_t{threads} * 4 < seqlen_k) threads *= 2;
  return threads;
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::min(rows, kMaxRowBlocks)); }

/// Device memory from cudaMallocAsync, freed in stream order.
class StreamBuffer {
 public:
  StreamBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    check_cuda(cudaMallocAsync(&data_, std::max<std::size_t>(bytes, 1), stream),
               "cudaMallocAsync (naive score buffer)");
  }
  ~StreamBuffer() { cudaFreeAsync(data_, stream_); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

/// One matrix per (sequence b, head h): the address of (b, h) = (0, 0), the leading dimension,
/// and the element strides from one sequence and from one head to the next.
struct HeadMatrix {
  const void* data;
  DType dtype;
  int64_t ld;
  int64_t seq_stride;
  int64_t head_stride;
};

/// Rows of a [B, rows, H, D] tensor.
HeadMatrix token_matrix(const void* data, DType dtype, const Shape& s, int64_t rows) {
  return {data, dtype, s.heads * s.head_dim, rows * s.heads * s.head_dim, s.head_dim};
}

/// An Nq x Nk matrix of a [B, H, Nq, Nk] buffer.
HeadMatrix score_matrix(const void* data, DType dtype, const Shape& s) {
  const int64_t per_head = s.seqlen_q * s.seqlen_k;
  return {data, dtype, s.seqlen_k, s.heads * per_head, per_head};
}

int as_int(int64_t value, const char* what) {
  if (value > INT_MAX) {
    throw Error(std::string("naive path: ") + what + " = " + std::to_string(value) +
                " exceeds cuBLAS's int range");
  }
  return static_cast<int>(value);
}

/// The per-head GEMMs of attention, in row-major terms. cuBLAS is column-major, so each call
/// computes the transposed product. One strided batch covers the larger of B and H, and the
/// smaller one takes a launch each: [B, N, H, D] storage has no single stride over (b, h).
class HeadGemms {
 public:
  HeadGemms(cublasHandle_t handle, const Shape& shape) : handle_(handle), shape_(shape) {}

  /// S (Nq x Nk) = alpha * X Z^T, X a query-side token matrix, Z a key-side one.
  void scores(float alpha, const HeadMatrix& x, const HeadMatrix& z, const HeadMatrix& s) const {
    run(CUBLAS_OP_T, CUBLAS_OP_N, shape_.seqlen_k, shape_.seqlen_q, shape_.head_dim, alpha, z, x,
        s);
  }
  /// Y (Nq x D) = alpha * P Z, P a score matrix, Z key-side.
  void query_side(float alpha, const HeadMatrix& p, const HeadMatrix& z,
                  const HeadMatrix& y) const {
    run(CUBLAS_OP_N, CUBLAS_OP_N, shape_.head_dim, shape_.seqlen_q, shape_.seqlen_k, alpha, z, p,
        y);
  }
  /// Y (Nk x D) = alpha * P^T X, P a score matrix, X query-side.
  void key_side(float alpha, const HeadMatrix& p, const HeadMatrix& x, const HeadMatrix& y) const {
    run(CUBLAS_OP_N, CUBLAS_OP_T, shape_.head_dim, shape_.seqlen_k, shape_.seqlen_q, alpha, x, p,
        y);
  }

 private:
  void run(cublasOperation_t op_a, cublasOperation_t op_b, int64_t m, int64_t n, int64_t k,
           float alpha, const HeadMatrix& a, const HeadMatrix& b, const HeadMatrix& c) const {
    const bool per_sequence = shape_.batch <= shape_.heads;
    const int64_t launches = per_sequence ? shape_.batch : shape_.heads;
    const int batch = as_int(per_sequence ? shape_.heads : shape_.batch, "GEMM batch");
    const auto launch_stride = [&](const HeadMatrix& x) {
      return per_sequence ? x.seq_stride : x.head_stride;
    };
    const auto batch_stride = [&](const HeadMatrix& x) {
      return static_cast<long long>(per_sequence ? x.head_stride : x.seq_stride);
    };
    const auto at = [&](const HeadMatrix& x, int64_t launch) {
      const auto offset = static_cast<std::size_t>(launch * launch_stride(x));
      return static_cast<const char*>(x.data) + offset * element_size(x.dtype);
    };
    const float beta = 0.0f;  // C is written, never read: the poisoned outputs stay unread
    for (int64_t i = 0; i < launches; ++i) {
      check_cublas(
          cublasGemmStridedBatchedEx(
              handle_, op_a, op_b, as_int(m, "GEMM m"), as_int(n, "GEMM n"), as_int(k, "GEMM k"),
              &alpha, at(a, i), cuda_type(a.dtype), as_int(a.ld, "lda"), batch_stride(a), at(b, i),
              cuda_type(b.dtype), as_int(b.ld, "ldb"), batch_stride(b), &beta,
              const_cast<char*>(at(c, i)),  // c is always a buffer this path writes
              cuda_type(c.dtype), as_int(c.ld, "ldc"), batch_stride(c), batch, CUBLAS_COMPUTE_32F,
              CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    }
  }

  cublasHandle_t handle_;
  Shape shape_;
};

int64_t score_count(const Shape& s) { return s.batch * s.heads * s.seqlen_q * s.seqlen_k; }

/// S, then P = softmax(S), then out = P V; leaves P in `probs`.
void forward_into(cublasHandle_t handle, cudaStream_t stream, const NaiveProblem& p, void* scores,
                  void* probs) {
  const Shape& s = p.shape;
  const HeadGemms gemms(handle, s);
  gemms.scores(p.scale, token_matrix(p.q, p.dtype, s, s.seqlen_q),
               token_matrix(p.k, p.dtype, s, s.seqlen_k), score_matrix(scores, DType::f32, s));
  const int64_t rows = s.batch * s.heads * s.seqlen_q;
  with_element_type(p.dtype, [&](auto element) {
    using T = decltype(element);
    softmax_rows<T><<<row_blocks(rows), row_threads(s.seqlen_k), 0, stream>>>(
        static_cast<const float*>(scores), static_cast<T*>(probs), rows, s.seqlen_q, s.seqlen_k,
        p.causal);
  });
  check_cuda(cudaGetLastError(), "softmax_rows launch");
  gemms.query_side(1.0f, score_matrix(probs, p.dtype, s), token_matrix(p.v, p.dtype, s, s.seqlen_k),
                   token_matrix(p.out, p.dtype, s, s.seqlen_q));
}

}  // namespace

CudaNaive::CudaNaive(cudaStream_t stream) : stream_(stream) {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  try {
    check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
    // cublasSetStream resets the workspace to cuBLAS's own, so ours is set after it.
    check_cuda(cudaMalloc(&workspace_, kCublasWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
    check_cublas(cublasSetWorkspace(handle_, workspace_, kCublasWorkspaceBytes),
                 "cublasSetWorkspace");
  } catch (...) {
    if (workspace_ != nullptr) cudaFree(workspace_);
    cublasDestroy(handle_);
    throw;
  }
}

CudaNaive::~CudaNaive() {
  cublasDestroy(handle_);
  cudaFree(workspace_);
}

int64_t CudaNaive::buffer_bytes(const Shape& shape, DType dtype) {
  return score_count(shape) * static_cast<int64_t>(sizeof(float) + element_size(dtype));
}

void CudaNaive::forward(const NaiveProblem& p) {
  const std::size_t scores = static_cast<std::size_t>(score_count(p.shape));
  const StreamBuffer s(scores * sizeof(float), stream_);
  const StreamBuffer probs(scores * element_size(p.dtype), stream_);
  forward_into(handle_, stream_, p, s.data(), probs.data());
}

void CudaNaive::forward_backward(const NaiveProblem& p) {
  const Shape& sh = p.shape;
  const std::size_t scores = static_cast<std::size_t>(score_count(sh));
  // S becomes dP once P is made, and P becomes dS once dV is made: two score buffers in all.
  const StreamBuffer s(scores * sizeof(float), stream_);
  const StreamBuffer probs(scores * element_size(p.dtype), stream_);
  forward_into(handle_, stream_, p, s.data(), probs.data());

  const HeadGemms gemms(handle_, sh);
  const HeadMatrix q = token_matrix(p.q, p.dtype, sh, sh.seqlen_q);
  const HeadMatrix k = token_matrix(p.k, p.dtype, sh, sh.seqlen_k);
  const HeadMatrix v = token_matrix(p.v, p.dtype, sh, sh.seqlen_k);
  const HeadMatrix dout = token_matrix(p.dout, p.dtype, sh, sh.seqlen_q);
  const HeadMatrix p_then_ds = score_matrix(probs.data(), p.dtype, sh);
  gemms.key_side(1.0f, p_then_ds, dout, token_matrix(p.dv, p.dtype, sh, sh.seqlen_k));
  gemms.scores(1.0f, dout, v, score_matrix(s.data(), DType::f32, sh));
  const int64_t rows = sh.batch * sh.heads * sh.seqlen_q;
  with_element_type(p.dtype, [&](auto element) {
    using T = decltype(element);
    softmax_grad_rows<T><<<row_blocks(rows), row_threads(sh.seqlen_k), 0, stream_>>>(
        static_cast<const float*>(s.data()), static_cast<T*>(probs.data()),
        static_cast<const T*>(p.out), static_cast<const T*>(p.dout), rows, sh.seqlen_q, sh.seqlen_k,
        sh.heads, sh.head_dim);
  });
  check_cuda(cudaGetLastError(), "softmax_grad_rows launch");
  gemms.query_side(p.scale, p_then_ds, k, token_matrix(p.dq, p.dtype, sh, sh.seqlen_q));
  gemms.key_side(p.scale, p_then_ds, q, token_matrix(p.dk, p.dtype, sh, sh.seqlen_k));
}

}  // namespace flashvision::tool
