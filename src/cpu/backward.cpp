// CPU backward pass, three steps with no atomics (deterministic for any thread count):
//  1. dvec = rowsum(dO * O) per (row, head), in fp32.
//  2. dK, dV: one task per (sequence, kv head, key block); it loops over the query heads of its
//     GQA group and every query block, recomputing P^T = exp2(S^T - lse) tile by tile.
//  3. dQ: one task per (sequence, head, query block); it recomputes P^T and dP^T per key block.
// Tiles are transposed as in the forward pass (query rows are SIMD lanes); no buffer grows with
// the sequence length except dvec (one float per query row and head).
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "api/problem.h"
#include "cpu/cpu_backend.h"
#include "cpu/huge_pages.h"
#include "cpu/isa.h"
#include "cpu/kernels.h"
#include "cpu/scratch.h"
#include "cpu/tiling.h"
#include "cpu/work.h"

namespace flashvision::detail {
namespace cpu {
namespace {

/// dvec = rowsum(dO * O), indexed [head][row] with rows numbered across sequences.
class RowDots {
 public:
  RowDots(const Problem& p, const KernelTable& kt)
      : rows_(p.varlen ? p.total_q : p.batch * p.seqlen_q), values_(p.heads * rows_) {
    const int64_t pairs = p.batch * p.heads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(thread_count(p, pairs))
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const int64_t seq = pair / p.heads, head = pair % p.heads;
      const SeqBounds b = p.bounds(seq);
      for (int64_t r = 0; r < b.q_len; ++r) {
        values_[index(p, seq, b, head, r)] =
            kt.row_dot(p.dtype, row_address(p.dout, p.dtype, seq, b.q_begin + r, head),
                       row_address(p.out, p.dtype, seq, b.q_begin + r, head), p.head_dim);
      }
    }
  }

  /// dvec of query row `r` of sequence `seq` (bounds `b`), head `head`.
  float at(const Problem& p, int64_t seq, const SeqBounds& b, int64_t head, int64_t r) const {
    return values_[index(p, seq, b, head, r)];
  }

 private:
  int64_t index(const Problem& p, int64_t seq, const SeqBounds& b, int64_t head, int64_t r) const {
    const int64_t first = p.varlen ? b.q_begin : seq * p.seqlen_q;
    return head * rows_ + first + r;
  }

  int64_t rows_;
  std::vector<float> values_;
};

/// Where one thread's tiles of one backward pass live in its scratch area.
struct BackwardScratch {
  int64_t k = 0, v = 0, q_t = 0, do_t = 0, s_t = 0, dp_t = 0, lse2 = 0, dvec = 0, visible = 0;
  int64_t q_rows = 0, do_rows = 0, dk = 0, dv = 0;  // dk_dv pass only
  int64_t dq_t = 0, scale = 0;                      // dq pass only
  ScratchPlan plan;

  BackwardScratch(Pass pass, const Tiling& t, int64_t head_dim) {
    const int64_t pitch = tile_pitch(head_dim);
    k = plan.reserve(t.max_keys() * pitch);
    v = plan.reserve(t.max_keys() * pitch);
    q_t = plan.reserve(head_dim * t.lane_pitch());
    do_t = plan.reserve(head_dim * t.lane_pitch());
    s_t = plan.reserve(t.max_keys() * t.lane_pitch());
    dp_t = plan.reserve(t.max_keys() * t.lane_pitch());
    lse2 = plan.reserve(t.max_rows());
    dvec = plan.reserve(t.max_rows());
    visible = plan.reserve(t.max_rows());
    if (pass == Pass::dk_dv) {
      q_rows = plan.reserve(t.max_rows() * pitch);
      do_rows = plan.reserve(t.max_rows() * pitch);
      dk = plan.reserve(t.max_keys() * pitch);
      dv = plan.reserve(t.max_keys() * pitch);
    } else {
      dq_t = plan.reserve(head_dim * t.lane_pitch());
      scale = plan.reserve(t.max_rows());
    }
  }
};

/// One thread's work in one backward pass (key_block for dk_dv, query_block for dq).
struct BackwardTask {
  const Problem& p;
  const KernelTable& kt;
  const Tiling& t;
  const BackwardScratch& layout;
  const RowDots& dots;
  float* scratch;  // this thread's area

  float* tile(int64_t offset) const { return scratch + offset; }

  /// Packs what every pass needs of query rows [q0, q0 + rows) of one head: Q^T in log2 units,
  /// dO^T, lse in log2 units and dvec (padding lanes get lse2 = +inf, hence P = 0).
  void load_query_block(int64_t seq, const SeqBounds& b, int64_t head, int64_t q0, int64_t rows,
                        int64_t lanes) const {
    const int64_t row = b.q_begin + q0;
    kt.pack_transposed(p.dtype, row_address(p.q, p.dtype, seq, row, head), p.q.row_stride, rows,
                       p.head_dim, p.scale * kLog2e, tile(layout.q_t), t.lane_pitch(), lanes);
    kt.pack_transposed(p.dtype, row_address(p.dout, p.dtype, seq, row, head), p.dout.row_stride,
                       rows, p.head_dim, 1.0f, tile(layout.do_t), t.lane_pitch(), lanes);
    float* lse2 = tile(layout.lse2);
    float* dvec = tile(layout.dvec);
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < rows; ++i) {
      const float lse = *p.lse.at(seq, head, row + i);
      // A row that saw no key has lse = -inf; +inf makes its P (and so its gradients) 0.
      lse2[i] = lse == -inf ? inf : lse * kLog2e;
      dvec[i] = dots.at(p, seq, b, head, q0 + i);
    }
    for (int64_t i = rows; i < lanes; ++i) {
      lse2[i] = inf;
      dvec[i] = 0.0f;
    }
  }

  /// S^T and dP^T of one (key block, query block) pair from the packed K, V, Q^T and dO^T,
  /// turned into P^T (in s_t) and dS^T (in dp_t).
  void scores_and_grads(const SeqBounds& b, int64_t k0, int64_t keys, int64_t q0, int64_t rows,
                        int64_t lanes) const {
    const int64_t ld = t.lane_pitch(), pitch = tile_pitch(p.head_dim);
    kt.gemm({keys, lanes, p.head_dim, tile(layout.k), pitch, 1, tile(layout.q_t), ld,
             tile(layout.s_t), ld, false});
    kt.gemm({keys, lanes, p.head_dim, tile(layout.v), pitch, 1, tile(layout.do_t), ld,
             tile(layout.dp_t), ld, false});
    ScoreTile scores{tile(layout.s_t), ld, keys, lanes, nullptr};
    if (block_needs_mask(p, b, q0, k0, keys)) {
      fill_visible(p, b, q0, rows, lanes, k0, keys, tile(layout.visible));
      scores.visible = tile(layout.visible);
    }
    kt.softmax_grad(scores, tile(layout.dp_t), tile(layout.lse2), tile(layout.dvec));
  }

  /// dK and dV of the key block at k0 of kv head `kv_head`, summed over its query heads.
  void key_block(int64_t seq, int64_t kv_head, int64_t k0) const {
    const SeqBounds b = p.bounds(seq);
    if (!starts_block(k0, b.k_len, t.block_k)) return;
    const int64_t keys = block_span(k0, b.k_len, t.block_k);
    // Rows of the row-major tiles are `pitch` floats apart; the GEMMs use `cols` of them.
    const int64_t d = p.head_dim, pitch = tile_pitch(d), cols = pad_lanes(d);
    pack_key_rows(kt, p, p.k, seq, b.k_begin + k0, kv_head, keys, tile(layout.k));
    pack_key_rows(kt, p, p.v, seq, b.k_begin + k0, kv_head, keys, tile(layout.v));
    float* dk = tile(layout.dk);
    float* dv = tile(layout.dv);
    for (int64_t i = 0; i < keys * pitch; ++i) dk[i] = dv[i] = 0.0f;

    // Under the causal mask, query rows before first_row see none of these keys.
    const int64_t first_row = p.causal && k0 + b.q_len - b.k_len > 0 ? k0 + b.q_len - b.k_len : 0;
    for (int64_t g = 0; g < p.group_size(); ++g) {
      const int64_t head = kv_head * p.group_size() + g;
      // Query blocks on the block_q grid, from the one holding first_row.
      for (int64_t q0 = first_row / t.block_q * t.block_q, rows = 0; q0 < b.q_len; q0 += rows) {
        rows = block_span(q0, b.q_len, t.block_q);
        const int64_t lanes = pad_lanes(rows);
        load_query_block(seq, b, head, q0, rows, lanes);
        const int64_t row = b.q_begin + q0;
        kt.pack_rows(p.dtype, row_address(p.q, p.dtype, seq, row, head), p.q.row_stride, rows, d,
                     p.scale, tile(layout.q_rows), pitch, cols);
        kt.pack_rows(p.dtype, row_address(p.dout, p.dtype, seq, row, head), p.dout.row_stride, rows,
                     d, 1.0f, tile(layout.do_rows), pitch, cols);
        scores_and_grads(b, k0, keys, q0, rows, lanes);
        // dV += P^T dO and dK += dS^T (scale Q): A is the tile, k runs over the query rows.
        kt.gemm({keys, cols, rows, tile(layout.s_t), t.lane_pitch(), 1, tile(layout.do_rows), pitch,
                 dv, pitch, true});
        kt.gemm({keys, cols, rows, tile(layout.dp_t), t.lane_pitch(), 1, tile(layout.q_rows), pitch,
                 dk, pitch, true});
      }
    }
    kt.store_rows(p.dtype, dk, pitch, keys, d, 1.0f,
                  row_address(p.dk, p.dtype, seq, b.k_begin + k0, kv_head), p.dk.row_stride);
    kt.store_rows(p.dtype, dv, pitch, keys, d, 1.0f,
                  row_address(p.dv, p.dtype, seq, b.k_begin + k0, kv_head), p.dv.row_stride);
  }

  /// dQ of the query block at q0 of head `head`.
  void query_block(int64_t seq, int64_t head, int64_t q0) const {
    const SeqBounds b = p.bounds(seq);
    if (!starts_block(q0, b.q_len, t.block_q)) return;
    const int64_t rows = block_span(q0, b.q_len, t.block_q);
    const int64_t lanes = pad_lanes(rows);
    const int64_t d = p.head_dim, ld = t.lane_pitch(), pitch = tile_pitch(d);
    const int64_t kv_head = head / p.group_size();
    load_query_block(seq, b, head, q0, rows, lanes);
    float* dq_t = tile(layout.dq_t);
    for (int64_t c = 0; c < d; ++c) {
      for (int64_t i = 0; i < lanes; ++i) dq_t[c * ld + i] = 0.0f;
    }
    const int64_t key_end = p.visible_keys(q0 + rows - 1, b.q_len, b.k_len);
    for (int64_t k0 = 0, keys = 0; k0 < key_end; k0 += keys) {
      keys = block_span(k0, key_end, t.block_k);
      pack_key_rows(kt, p, p.k, seq, b.k_begin + k0, kv_head, keys, tile(layout.k));
      pack_key_rows(kt, p, p.v, seq, b.k_begin + k0, kv_head, keys, tile(layout.v));
      scores_and_grads(b, k0, keys, q0, rows, lanes);
      // dQ^T += K^T dS^T: A = K^T is K with swapped strides.
      kt.gemm({d, lanes, keys, tile(layout.k), 1, pitch, tile(layout.dp_t), ld, dq_t, ld, true});
    }
    float* scale = tile(layout.scale);
    for (int64_t i = 0; i < rows; ++i) scale[i] = p.scale;
    kt.store_transposed(p.dtype, dq_t, ld, rows, d, scale,
                        row_address(p.dq, p.dtype, seq, b.q_begin + q0, head), p.dq.row_stride);
  }
};

}  // namespace
}  // namespace cpu

void cpu_backward(const Problem& problem) {
  using namespace cpu;
  const KernelTable& kt = select_kernels();
  const int64_t threads_wanted = requested_threads(problem);
  const Tiling key_tiles = choose_tiling(Pass::dk_dv, problem.head_dim, problem.seqlen_k,
                                         problem.batch * problem.heads_kv, threads_wanted);
  const Tiling query_tiles = choose_tiling(Pass::dq, problem.head_dim, problem.seqlen_q,
                                           problem.batch * problem.heads, threads_wanted);
  const int64_t k_blocks = (problem.seqlen_k + key_tiles.block_k - 1) / key_tiles.block_k;
  const int64_t q_blocks = (problem.seqlen_q + query_tiles.block_q - 1) / query_tiles.block_q;
  const int64_t key_tasks = problem.batch * problem.heads_kv * k_blocks;
  const int64_t query_tasks = problem.batch * problem.heads * q_blocks;
  if (key_tasks + query_tasks == 0) return;
  const RowDots dots(problem, kt);
  const int threads = thread_count(problem, key_tasks > query_tasks ? key_tasks : query_tasks);
  const BackwardScratch key_layout(Pass::dk_dv, key_tiles, problem.head_dim);
  const BackwardScratch query_layout(Pass::dq, query_tiles, problem.head_dim);
  const int64_t per_thread = key_layout.plan.size() > query_layout.plan.size()
                                 ? key_layout.plan.size()
                                 : query_layout.plan.size();
  const AlignedFloats scratch(threads * per_thread);
  const int64_t rows_q = problem.varlen ? problem.total_q : problem.seqlen_q;
  const int64_t rows_k = problem.varlen ? problem.total_k : problem.seqlen_k;
  advise_huge_pages(problem.dq.data, operand_span_bytes(problem, problem.dq, rows_q, problem.heads));
  advise_huge_pages(problem.dk.data,
                    operand_span_bytes(problem, problem.dk, rows_k, problem.heads_kv));
  advise_huge_pages(problem.dv.data,
                    operand_span_bytes(problem, problem.dv, rows_k, problem.heads_kv));

#pragma omp parallel num_threads(threads)
  {
    float* mine = scratch.data() + omp_get_thread_num() * per_thread;
    const BackwardTask key_pass{problem, kt, key_tiles, key_layout, dots, mine};
    const BackwardTask query_pass{problem, kt, query_tiles, query_layout, dots, mine};
    // Under the causal mask the first key blocks and the last query blocks cost most: hand them
    // out first.
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < key_tasks; ++i) {
      const int64_t seq = i / k_blocks / problem.heads_kv;
      const int64_t kv_head = i / k_blocks % problem.heads_kv;
      key_pass.key_block(seq, kv_head, (i % k_blocks) * key_tiles.block_k);
    }
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < query_tasks; ++i) {
      const int64_t block = i % q_blocks;
      const int64_t head = i / q_blocks % problem.heads;
      const int64_t seq = i / q_blocks / problem.heads;
      const int64_t q_block = problem.causal ? q_blocks - 1 - block : block;
      query_pass.query_block(seq, head, q_block * query_tiles.block_q);
    }
  }
}

}  // namespace flashvision::detail
