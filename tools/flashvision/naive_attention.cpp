// CPU naive attention: S is materialized for every (b, h) like softmax(q @ k.T * scale) @ v does,
// and the backward keeps P from the forward and builds dP / dS, as autograd would. K (and V for
// the backward) are packed once per call so the score GEMM streams contiguous keys.
#include "naive_attention.h"

#include <algorithm>
#include <memory>
#include <string>

#include <omp.h>

#include "flashvision/error.h"
#include "naive_kernels.h"

namespace flashvision::tool {

namespace {

/// The problem with its operands typed as float32, the only element type this path computes in.
struct FloatProblem {
  Shape shape;
  float scale;
  bool causal;
  const float* q;
  const float* k;
  const float* v;
  float* out;
  const float* dout;
  float* dq;
  float* dk;
  float* dv;
};

FloatProblem float_problem(const NaiveProblem& p) {
  if (p.dtype != DType::f32) {
    throw Error(std::string("CPU naive path: operands must be f32, got ") + to_string(p.dtype));
  }
  return {p.shape,
          p.scale,
          p.causal,
          static_cast<const float*>(p.q),
          static_cast<const float*>(p.k),
          static_cast<const float*>(p.v),
          static_cast<float*>(p.out),
          static_cast<const float*>(p.dout),
          static_cast<float*>(p.dq),
          static_cast<float*>(p.dk),
          static_cast<float*>(p.dv)};
}

/// Score rows per OpenMP task: enough rows for the register blocking, few enough that the task's
/// slice of S (rows x Nk floats) stays in a 256 KB share of L2 between the score GEMM, the
/// softmax and the P V product.
int64_t rows_per_task(int64_t seqlen_k) {
  constexpr int64_t kTaskScoreBytes = 256 * 1024;
  constexpr int64_t kMinRows = 4, kMaxRows = 64;
  const int64_t rows = kTaskScoreBytes / (seqlen_k * static_cast<int64_t>(sizeof(float)));
  return std::clamp<int64_t>(rows / kMinRows * kMinRows, kMinRows, kMaxRows);
}

/// Keys per task in the dK / dV phase of the backward.
constexpr int64_t kKeysPerTask = 32;

/// Heads the backward works on at once: one per thread when there are many heads, else one head
/// at a time with its rows (then its keys) spread over the threads.
int64_t concurrent_heads(const Shape& s, int threads) {
  const int64_t heads = s.batch * s.heads;
  return heads >= 2 * static_cast<int64_t>(threads) ? threads : 1;
}

/// Floats of one packed key operand (all heads).
int64_t packed_heads_size(const Shape& s) {
  return s.batch * s.heads * naive::packed_size(s.seqlen_k, s.head_dim);
}

/// Element offset of row `row` of head `h` of sequence `b` in a [B, rows, H, D] tensor.
int64_t row_offset(const Shape& s, int64_t rows, int64_t b, int64_t h, int64_t row) {
  return ((b * rows + row) * s.heads + h) * s.head_dim;
}

int64_t visible_keys(const FloatProblem& p, int64_t row) {
  const int64_t nq = p.shape.seqlen_q, nk = p.shape.seqlen_k;
  if (!p.causal) return nk;
  return std::clamp<int64_t>(row + 1 + nk - nq, 0, nk);
}

/// Packs the key rows of every head of x ([B, Nk, H, D]) with naive::pack_panels().
void pack_heads(const Shape& s, const float* x, float* packed) {
  const int64_t heads = s.batch * s.heads, size = naive::packed_size(s.seqlen_k, s.head_dim);
#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < heads; ++bh) {
    naive::pack_panels(x + row_offset(s, s.seqlen_k, bh / s.heads, bh % s.heads, 0),
                       s.heads * s.head_dim, s.seqlen_k, s.head_dim, packed + bh * size);
  }
}

/// Forward of rows [r0, r0 + rows) of head bh; leaves P in `s` (rows x Nk).
void forward_rows(const FloatProblem& p, const float* k_packed, int64_t bh, int64_t r0,
                  int64_t rows, float* s) {
  const Shape& sh = p.shape;
  const int64_t b = bh / sh.heads, h = bh % sh.heads, stride = sh.heads * sh.head_dim,
                nk = sh.seqlen_k;
  naive::scores_block(p.q + row_offset(sh, sh.seqlen_q, b, h, r0), stride, rows,
                      k_packed + bh * naive::packed_size(nk, sh.head_dim), nk, sh.head_dim, p.scale,
                      s, nk);
  for (int64_t r = 0; r < rows; ++r) naive::softmax_row(s + r * nk, visible_keys(p, r0 + r), nk);
  naive::weighted_rows(s, nk, 1, rows, nk, p.v + row_offset(sh, nk, b, h, 0), stride, sh.head_dim,
                       1.0f, p.out + row_offset(sh, sh.seqlen_q, b, h, r0), stride);
}

/// Forward of every head; P of every head stays in `probs` (B H Nq Nk floats).
void forward_all(const FloatProblem& p, float* probs, float* k_packed) {
  const Shape& sh = p.shape;
  pack_heads(sh, p.k, k_packed);
  const int64_t rows = rows_per_task(sh.seqlen_k);
  const int64_t blocks = (sh.seqlen_q + rows - 1) / rows;
  const int64_t tasks = sh.batch * sh.heads * blocks;
#pragma omp parallel for schedule(dynamic)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t bh = t / blocks, r0 = (t % blocks) * rows;
    forward_rows(p, k_packed, bh, r0, std::min(rows, sh.seqlen_q - r0),
                 probs + (bh * sh.seqlen_q + r0) * sh.seqlen_k);
  }
}

/// Rows [r0, r0 + rows) of head bh: dP = dO V^T, dS = P (dP - rowsum(dO o O)), dQ = dS K scale.
void backward_rows(const FloatProblem& p, const float* v_packed, int64_t bh, int64_t r0,
                   int64_t rows, const float* probs, float* grad) {
  const Shape& sh = p.shape;
  const int64_t b = bh / sh.heads, h = bh % sh.heads, stride = sh.heads * sh.head_dim,
                nk = sh.seqlen_k;
  const int64_t q_off = row_offset(sh, sh.seqlen_q, b, h, r0);
  naive::scores_block(p.dout + q_off, stride, rows,
                      v_packed + bh * naive::packed_size(nk, sh.head_dim), nk, sh.head_dim, 1.0f,
                      grad + r0 * nk, nk);
  for (int64_t r = 0; r < rows; ++r) {
    const float delta =
        naive::dot(p.dout + q_off + r * stride, p.out + q_off + r * stride, sh.head_dim);
    naive::softmax_grad_row(probs + (r0 + r) * nk, grad + (r0 + r) * nk, delta, nk);
  }
  naive::weighted_rows(grad + r0 * nk, nk, 1, rows, nk, p.k + row_offset(sh, nk, b, h, 0), stride,
                       sh.head_dim, p.scale, p.dq + q_off, stride);
}

/// Keys [c0, c0 + cols) of head bh: dV = P^T dO, dK = dS^T Q scale.
void backward_keys(const FloatProblem& p, int64_t bh, int64_t c0, int64_t cols, const float* probs,
                   const float* grad) {
  const Shape& sh = p.shape;
  const int64_t b = bh / sh.heads, h = bh % sh.heads, stride = sh.heads * sh.head_dim,
                nk = sh.seqlen_k;
  const int64_t q_off = row_offset(sh, sh.seqlen_q, b, h, 0), k_off = row_offset(sh, nk, b, h, c0);
  naive::weighted_rows(probs + c0, 1, nk, cols, sh.seqlen_q, p.dout + q_off, stride, sh.head_dim,
                       1.0f, p.dv + k_off, stride);
  naive::weighted_rows(grad + c0, 1, nk, cols, sh.seqlen_q, p.q + q_off, stride, sh.head_dim,
                       p.scale, p.dk + k_off, stride);
}

void backward_all(const FloatProblem& p, const float* probs, const float* v_packed, int threads) {
  const Shape& sh = p.shape;
  const int64_t scores = sh.seqlen_q * sh.seqlen_k, heads = sh.batch * sh.heads;
  const int64_t concurrent = concurrent_heads(sh, threads);
  const auto grads =
      std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(concurrent * scores));
  if (concurrent > 1) {
#pragma omp parallel for schedule(dynamic)
    for (int64_t bh = 0; bh < heads; ++bh) {
      float* grad = grads.get() + omp_get_thread_num() * scores;
      backward_rows(p, v_packed, bh, 0, sh.seqlen_q, probs + bh * scores, grad);
      backward_keys(p, bh, 0, sh.seqlen_k, probs + bh * scores, grad);
    }
    return;
  }
  const int64_t rows = rows_per_task(sh.seqlen_k);
  const int64_t row_blocks = (sh.seqlen_q + rows - 1) / rows;
  const int64_t key_blocks = (sh.seqlen_k + kKeysPerTask - 1) / kKeysPerTask;
#pragma omp parallel
  for (int64_t bh = 0; bh < heads; ++bh) {
    // dK and dV need every row's dS, so all row blocks finish (implicit barrier) before any key
    // block, and all key blocks finish before the next head overwrites the shared dS.
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < row_blocks; ++t) {
      backward_rows(p, v_packed, bh, t * rows, std::min(rows, sh.seqlen_q - t * rows),
                    probs + bh * scores, grads.get());
    }
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < key_blocks; ++t) {
      const int64_t c0 = t * kKeysPerTask;
      backward_keys(p, bh, c0, std::min(kKeysPerTask, sh.seqlen_k - c0), probs + bh * scores,
                    grads.get());
    }
  }
}

}  // namespace

int64_t cpu_naive_buffer_bytes(const Shape& s, bool backward, int threads) {
  const int64_t scores = s.seqlen_q * s.seqlen_k;
  const int64_t heads = s.batch * s.heads + (backward ? concurrent_heads(s, threads) : 0);
  return (heads * scores + packed_heads_size(s)) * static_cast<int64_t>(sizeof(float));
}

void cpu_naive_forward(const NaiveProblem& problem) {
  const FloatProblem p = float_problem(problem);
  const Shape& sh = p.shape;
  const auto probs = std::make_unique_for_overwrite<float[]>(
      static_cast<std::size_t>(sh.batch * sh.heads * sh.seqlen_q * sh.seqlen_k));
  const auto k_packed =
      std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(packed_heads_size(sh)));
  forward_all(p, probs.get(), k_packed.get());
}

void cpu_naive_forward_backward(const NaiveProblem& problem) {
  const FloatProblem p = float_problem(problem);
  const Shape& sh = p.shape;
  const auto probs = std::make_unique_for_overwrite<float[]>(
      static_cast<std::size_t>(sh.batch * sh.heads * sh.seqlen_q * sh.seqlen_k));
  const auto packed =
      std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(packed_heads_size(sh)));
  forward_all(p, probs.get(), packed.get());
  pack_heads(sh, p.v, packed.get());  // packed K is no longer needed: reuse the buffer for V
  backward_all(p, probs.get(), packed.get(), omp_get_max_threads());
}

}  // namespace flashvision::tool
