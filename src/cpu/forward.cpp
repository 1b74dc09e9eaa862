// CPU forward pass: one task per (sequence, head, query block), or per (sequence, head, query
// block, key part) where key_split.h splits the keys, streaming key/value blocks with an online
// softmax; schedule.h hands the tasks out. Per thread it holds a few tiles (O(block^2 +
// block * head_dim) floats); no buffer grows with the sequence length.
//
// Tiles are transposed: query rows are SIMD lanes. S^T = K (Q^T) needs no transposed copy of K,
// the softmax runs lane-wise, and O^T += V^T P^T reads V in place (V^T is just A with swapped
// strides). Only Q (once per task) and O (once per task) change layout.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "api/problem.h"
#include "cpu/amx_forward.h"
#include "cpu/cpu_backend.h"
#include "cpu/huge_pages.h"
#include "cpu/isa.h"
#include "cpu/kernels.h"
#include "cpu/key_split.h"
#include "cpu/schedule.h"
#include "cpu/scratch.h"
#include "cpu/tiling.h"
#include "cpu/tiling_override.h"
#include "cpu/work.h"

namespace flashvision::detail {
namespace cpu {
namespace {

/// Where one thread's forward tiles live in its scratch area.
struct ForwardScratch {
  int64_t q_t, o_t, s_t, k, v, row_max, row_sum, row_scale, visible, block_max;
  ScratchPlan plan;

  ForwardScratch(const Tiling& t, int64_t head_dim) {
    q_t = plan.reserve(head_dim * t.lane_pitch());
    o_t = plan.reserve(head_dim * t.lane_pitch());
    s_t = plan.reserve(t.max_keys() * t.lane_pitch());
    k = plan.reserve(t.max_keys() * tile_pitch(head_dim));
    v = plan.reserve(t.max_keys() * tile_pitch(head_dim));
    row_max = plan.reserve(t.max_rows());
    row_sum = plan.reserve(t.max_rows());
    row_scale = plan.reserve(t.max_rows());
    visible = plan.reserve(t.max_rows());
    block_max = plan.reserve(t.max_rows());
  }
};

/// Which query block of which head and sequence, and which of its key parts (0 of 1 unsplit).
struct TaskIndex {
  int64_t seq, head, q0;
  int64_t query_block;  ///< over the whole call: stream * q_blocks + the block
  int part;
};

/// One thread's forward tasks: query rows [q0, q0 + rows) of head `head` of sequence `seq`,
/// against all of its keys or one part of them.
///
/// Under the key split, a part 0 is left pending in the thread's tiles: when the thread's next
/// task is part 1 of the same block (the usual case: the owner of a stream takes its tasks in
/// order), that part continues the same online softmax, exactly as an unsplit task, with no copy
/// or merge. Only when another thread took part 1 (it stole it) do the parts meet in the slots.
struct ForwardTask {
  const Problem& p;
  const KernelTable& kt;
  const Tiling& t;
  const ForwardScratch& layout;
  float* scratch;       // this thread's area
  int64_t key_parts;    // 1, or 2 where the keys are split
  KeyPartSlots* slots;  // the split's partial results, or nullptr
  bool pending = false;  // a part 0 (pending_at) waits in the tiles for its part 1
  TaskIndex pending_at{};

  float* tile(int64_t offset) const { return scratch + offset; }

  void run(const TaskIndex& at) {
    const bool continues = pending && at.part == 1 && at.query_block == pending_at.query_block;
    if (pending && !continues) leave_pending();
    pending = false;
    const int64_t seq = at.seq, head = at.head, q0 = at.q0;
    const SeqBounds b = p.bounds(seq);
    if (!starts_block(q0, b.q_len, t.block_q)) return;
    const int64_t rows = block_span(q0, b.q_len, t.block_q);
    const int64_t lanes = pad_lanes(rows);
    const int64_t d = p.head_dim;
    const int64_t ld = t.lane_pitch();
    const int64_t kv_head = head / p.group_size();
    float* q_t = tile(layout.q_t);
    float* o_t = tile(layout.o_t);
    float* s_t = tile(layout.s_t);
    float* row_max = tile(layout.row_max);
    float* row_sum = tile(layout.row_sum);

    if (!continues) {
      kt.pack_transposed(p.dtype, row_address(p.q, p.dtype, seq, b.q_begin + q0, head),
                         p.q.row_stride, rows, d, p.scale * kLog2e, q_t, ld, lanes);
      for (int64_t i = 0; i < lanes; ++i) {
        row_max[i] = -std::numeric_limits<float>::infinity();
        row_sum[i] = 0.0f;
      }
      for (int64_t c = 0; c < d; ++c) {
        for (int64_t i = 0; i < lanes; ++i) o_t[c * ld + i] = 0.0f;
      }
    }

    // Keys past what the last row may see are hidden from every row of the block.
    const int64_t visible_end = p.visible_keys(q0 + rows - 1, b.q_len, b.k_len);
    const int64_t split = key_parts > 1 ? key_split_point(visible_end, t.block_k) : visible_end;
    const int64_t key_begin = at.part == 0 ? 0 : split;
    const int64_t key_end = at.part == 0 ? split : visible_end;
    for (int64_t k0 = key_begin, keys = 0; k0 < key_end; k0 += keys) {
      keys = block_span(k0, key_end, t.block_k);
      const int64_t next_keys = k0 + keys < key_end ? block_span(k0 + keys, key_end, t.block_k) : 0;
      prefetch_key_rows(p, p.k, seq, b.k_begin + k0 + keys, kv_head, next_keys);
      prefetch_key_rows(p, p.v, seq, b.k_begin + k0 + keys, kv_head, next_keys);
      const KeyRows k_rows =
          key_rows_for_gemm(kt, p, p.k, seq, b.k_begin + k0, kv_head, keys, tile(layout.k));
      ScoreTile scores{s_t, ld, keys, lanes, nullptr};
      GemmArgs s_gemm{keys, lanes, d, k_rows.data, k_rows.pitch, 1, q_t, ld, s_t, ld, false};
      if (block_needs_mask(p, b, q0, k0, keys)) {
        fill_visible(p, b, q0, rows, lanes, k0, keys, tile(layout.visible));
        scores.visible = tile(layout.visible);
      } else {
        // The GEMM takes the block's max per lane as it stores S^T: one pass less over S^T.
        float* block_max = tile(layout.block_max);
        for (int64_t i = 0; i < lanes; ++i) block_max[i] = -std::numeric_limits<float>::infinity();
        s_gemm.col_max = block_max;
        scores.max = block_max;
      }
      kt.gemm(s_gemm);
      kt.online_softmax(scores, row_max, row_sum, o_t, d, ld);

      const KeyRows v_rows =
          key_rows_for_gemm(kt, p, p.v, seq, b.k_begin + k0, kv_head, keys, tile(layout.v));
      kt.gemm({d, lanes, keys, v_rows.data, 1, v_rows.pitch, s_t, ld, o_t, ld, true});
    }
    if (key_parts == 1 || continues) {
      finish(seq, head, b, q0, rows);
    } else if (at.part == 0) {
      pending = true;
      pending_at = at;
    } else {
      leave_part(at);
    }
  }

  /// Called once the thread has no task left: leaves a pending part 0.
  void flush() {
    if (pending) leave_pending();
    pending = false;
  }

 private:
  void leave_pending() { leave_part(pending_at); }

  /// A part of a split block whose other part another thread runs: merges when that one has left
  /// its result already (and then writes the block), else leaves this part's in its slot for
  /// that thread to merge (or merges after all when it arrived meanwhile).
  void leave_part(const TaskIndex& at) {
    const SeqBounds b = p.bounds(at.seq);
    const int64_t rows = block_span(at.q0, b.q_len, t.block_q);
    const int64_t lanes = pad_lanes(rows);
    const int64_t ld = t.lane_pitch();
    float* o_t = tile(layout.o_t);
    float* row_max = tile(layout.row_max);
    float* row_sum = tile(layout.row_sum);
    const bool merge = slots->other_done(at.query_block) ||
                       slots->publish(at.query_block, at.part, o_t, ld, p.head_dim, lanes, row_max,
                                      row_sum);
    if (!merge) return;
    slots->merge_other(at.query_block, at.part, o_t, ld, p.head_dim, lanes, row_max, row_sum,
                       tile(layout.row_scale), tile(layout.block_max));
    finish(at.seq, at.head, b, at.q0, rows);
  }

  /// Normalizes O by the row sums, writes it and the log-sum-exp. Rows that saw no key have sum
  /// 0: they get O = 0 and lse = -inf.
  void finish(int64_t seq, int64_t head, const SeqBounds& b, int64_t q0, int64_t rows) const {
    const float* row_max = tile(layout.row_max);
    const float* row_sum = tile(layout.row_sum);
    float* row_scale = tile(layout.row_scale);
    for (int64_t i = 0; i < rows; ++i) {
      const float sum = row_sum[i];
      row_scale[i] = sum > 0.0f ? 1.0f / sum : 0.0f;
      if (p.lse.data != nullptr) {
        *p.lse.at(seq, head, b.q_begin + q0 + i) = sum > 0.0f
                                                       ? (row_max[i] + std::log2(sum)) * kLn2
                                                       : -std::numeric_limits<float>::infinity();
      }
    }
    kt.store_transposed(p.dtype, tile(layout.o_t), t.lane_pitch(), rows, p.head_dim, row_scale,
                        row_address(p.out, p.dtype, seq, b.q_begin + q0, head), p.out.row_stride);
  }
};

}  // namespace
}  // namespace cpu

void cpu_forward(const Problem& problem) {
  using namespace cpu;
  if (problem.dtype == DType::f8e4m3) return cpu_fp8_forward(problem);
  if (const AmxKernels* amx = amx_forward_kernels(problem)) return cpu_amx_forward(problem, *amx);
  const KernelTable& kt = select_kernels();
  const int64_t streams = problem.batch * problem.heads;
  const bool kv_in_place =
      reads_rows_in_place(problem, problem.k) && reads_rows_in_place(problem, problem.v);
  const Tiling t =
      forward_tiling_override(choose_tiling(Pass::forward, problem.head_dim, problem.seqlen_q,
                                            streams, requested_threads(problem), kv_in_place));
  const int64_t q_blocks = (problem.seqlen_q + t.block_q - 1) / t.block_q;
  const int64_t query_tasks = streams * q_blocks;
  if (query_tasks == 0) return;
  const int64_t key_parts =
      forward_key_parts(forward_key_split_override(), query_tasks, requested_threads(problem),
                        problem.seqlen_k, problem.causal, t);
  const int64_t tasks = query_tasks * key_parts;
  const int threads = thread_count(problem, tasks);
  const ForwardScratch layout(t, problem.head_dim);
  // Kept from call to call (per calling thread): fresh scratch can be fresh pages, a page fault
  // per 4 KiB at first touch (always under the CLI bench, which fixes glibc's mmap threshold):
  // sd15-self-16 at 16 threads has 9 MiB of tiles.
  thread_local GrowingScratch kept_scratch;
  float* const scratch = kept_scratch.reserve(threads * layout.plan.size());
  thread_local GrowingScratch kept_slots;
  std::unique_ptr<KeyPartSlots> slots;
  if (key_parts > 1) {
    slots = std::make_unique<KeyPartSlots>(
        kept_slots.reserve(KeyPartSlots::floats_needed(query_tasks, problem.head_dim, t)),
        query_tasks, problem.head_dim, t);
  }
  // A stream's blocks are its query blocks, each as key_parts consecutive tasks: the owner of a
  // stream runs a block's parts in turn (packing its Q^T once), helpers take single parts.
  StreamBlocks queue(streams, q_blocks * key_parts);
  advise_huge_pages(problem.out.data,
                    operand_span_bytes(problem, problem.out,
                                       problem.varlen ? problem.total_q : problem.seqlen_q,
                                       problem.heads));

#pragma omp parallel num_threads(threads)
  {
    ForwardTask task{problem, kt, t, layout,
                     scratch + omp_get_thread_num() * layout.plan.size(), key_parts, slots.get()};
    StreamBlocks::Walk walk(queue, omp_get_thread_num(), threads);
    for (int64_t stream = 0, block = 0; walk.next(stream, block);) {
      const int64_t q_block = query_block_at(block / key_parts, q_blocks);
      task.run({stream / problem.heads, stream % problem.heads, q_block * t.block_q,
                stream * q_blocks + q_block, static_cast<int>(block % key_parts)});
    }
    task.flush();
  }
}

}  // namespace flashvision::detail
