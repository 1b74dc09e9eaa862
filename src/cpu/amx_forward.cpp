// CPU forward with AMX tiles for bf16 inputs: one task per (sequence, head, query block), handed
// out by schedule.h as in forward.cpp, streaming key blocks with an online softmax in fp32.
//
// Per key block and group of 32 query rows: S = Q K^T in bf16 tiles with fp32 accumulation, the
// softmax row by row (scores scaled in fp32, P rounded to bf16 as GPU flash kernels do), O += P V
// into fp32 tiles kept in the thread's scratch. A group's S (32 x up to 384 fp32 at the default
// blocks, 48 KiB) and P stay in the core's caches between the three steps; the block's packed K^T
// and V are read once per group from L2. The tiles want K^T and V in AMX's pair layout
// (amx_kernels.h); each thread packs the keys of the (sequence, kv head) it works on once, block by
// block as its tasks reach them, and keeps them for its next tasks, which schedule.h makes mostly
// the same stream's. That buffer grows with the key length, so problems whose packed K/V would pass
// kPackedBudgetBytes per thread keep the fp32 forward.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "api/problem.h"
#include "cpu/amx_forward.h"
#include "cpu/amx_kernels.h"
#include "cpu/cpu_backend.h"
#include "cpu/isa.h"
#include "cpu/schedule.h"
#include "cpu/scratch.h"
#include "cpu/tiling.h"
#include "cpu/tiling_override.h"
#include "cpu/work.h"

namespace flashvision::detail {
namespace cpu {
namespace {

/// Keys per block: 256 (up to 384 for a merged remainder); a multiple of the 32-key V chunk, so
/// blocks start on packed chunks. Against 128 on the Xeon of BENCH.md (16 threads, alternated in
/// one process, bench/results/2026-11-30-s19, calls 3 and 4): sd15-self-16 +6..9 %, ViT-B/16 and
/// ViT-H/14 +7 % (their 197 and 257 keys in one block), sd15-self-32 +14 %, sdxl-self-128 +14 %,
/// dit-xl2-512 +26 %, flux-1024 +15 %, sd15-self-64 +6 %, vae-mid-512 even (not profiled: a block's
/// O tiles are loaded and stored once per 32-row group and its set-up is paid once, for twice the
/// keys). 384 and 512 keys were no better (sd15-self-64 -13 % at 512).
/// FLASHVISION_CPU_AMX_BLOCKS may set another multiple of 32.
constexpr int64_t kBlockKeys = 256;
/// Query rows per block: the largest of 128, 64, 32 that still gives each thread 8 tasks, or 4
/// where one stream's packed K/V passes kCachedPackBytes.
constexpr int64_t kLargestBlockRows = 128;
constexpr int64_t kSmallestBlockRows = 32;
constexpr int64_t kTasksPerThread = 8;
constexpr int64_t kTasksPerThreadUncached = 4;
/// Packed K/V of one stream beyond which it does not stay in a core's L2 (2 MiB on the Xeon of
/// BENCH.md) between a task's key blocks and the next task's: every task then reads it from L3
/// again, once per key block, so fewer, taller tasks read it fewer times. vae-mid-512 (one
/// stream, 4096 keys x 512: 8 MiB packed) on 16 threads: 32-row blocks (8 tasks a thread)
/// 6.6 ms, 64 rows 5.7 ms, 128 rows 6.4 ms (2 tasks a thread: the last ones wait).
constexpr int64_t kCachedPackBytes = int64_t{1} << 20;
/// Query rows of a task that cost about what packing one stream's K and V costs (16 threads on
/// the Xeon of BENCH.md, sd15-self-16: 19.5 us of packing, 16.1 us for a 32-row task).
constexpr int64_t kPackCostRows = 40;
/// Query rows that go through S, the softmax and P V together: two tiles, one 2 x 2 tile block.
constexpr int64_t kGroupRows = 2 * kAmxRows;
/// Packed K and V of one (sequence, kv head) per thread: 16 MiB is 32768 keys at head_dim 128.
constexpr int64_t kPackedBudgetBytes = int64_t{16} << 20;

constexpr int64_t round_up(int64_t n, int64_t step) { return (n + step - 1) / step * step; }

/// Sizes that follow from the head dim and the longest key sequence.
struct AmxShape {
  int64_t head_dim, dp, d_tiles, ld_o, key_tiles, key_chunks;

  AmxShape(int64_t d, int64_t seqlen_k)
      : head_dim(d),
        dp(round_up(d, 32)),
        d_tiles(round_up(d, 16) / 16),
        ld_o(round_up(d, 16)),
        key_chunks(round_up(seqlen_k, kAmxKeyChunk) / kAmxKeyChunk) {
    key_tiles = key_chunks * (kAmxKeyChunk / kAmxKeyTile);
  }
  /// uint32 words of one packed K^T tile and of one packed V chunk.
  int64_t key_tile_words() const { return dp / 2 * kAmxKeyTile; }
  int64_t value_chunk_words() const { return d_tiles * 16 * 16; }
  int64_t packed_bytes() const {
    return 4 * (key_tiles * key_tile_words() + key_chunks * value_chunk_words());
  }
};

/// Floats for `n` elements of `bytes` bytes each.
constexpr int64_t floats_for(int64_t n, int64_t bytes) { return (n * bytes + 3) / 4; }

/// Where one thread's buffers live in its scratch area.
struct AmxScratch {
  int64_t q, s, p, o, row_max, row_sum, visible, keys, values;
  ScratchPlan plan;

  AmxScratch(const AmxShape& shape, int64_t block_rows, int64_t block_keys) {
    const int64_t lanes = pad_lanes(block_rows + block_rows / 2);
    const int64_t ld = round_up(block_keys + block_keys / 2, kAmxKeyChunk);
    q = plan.reserve(floats_for(lanes * shape.dp, 2));
    s = plan.reserve(kGroupRows * ld);
    p = plan.reserve(floats_for(kGroupRows * ld, 2));
    o = plan.reserve(lanes * shape.ld_o);
    row_max = plan.reserve(lanes);
    row_sum = plan.reserve(lanes * kAmxSumLanes);
    visible = plan.reserve(floats_for(lanes, 8));
    keys = plan.reserve(shape.key_tiles * shape.key_tile_words());
    values = plan.reserve(shape.key_chunks * shape.value_chunk_words());
  }
};

/// One thread's tasks, and the (sequence, kv head) whose keys it has packed so far.
struct AmxTask {
  const Problem& p;
  const AmxKernels& kt;
  const AmxShape& shape;
  const AmxScratch& layout;
  float* scratch;
  int64_t block_rows;
  int64_t block_keys;
  int64_t packed_seq = -1, packed_head = -1;
  int64_t packed_keys = 0;  // a multiple of kAmxKeyChunk (or past the sequence's end)

  template <typename T>
  T* area(int64_t offset) const {
    return reinterpret_cast<T*>(scratch + offset);
  }

  /// Packs K^T and V of keys [0, end) of (seq, kv_head) where not packed yet.
  void pack_keys_until(int64_t seq, int64_t kv_head, const SeqBounds& b, int64_t end) {
    if (seq != packed_seq || kv_head != packed_head) {
      packed_seq = seq;
      packed_head = kv_head;
      packed_keys = 0;
    }
    const int64_t d = shape.head_dim;
    for (; packed_keys < end; packed_keys += kAmxKeyChunk) {
      const int64_t keys = std::min(kAmxKeyChunk, b.k_len - packed_keys);
      const int64_t first = std::min(keys, kAmxKeyTile);
      const auto* k = static_cast<const uint16_t*>(
          row_address(p.k, p.dtype, seq, b.k_begin + packed_keys, kv_head));
      uint32_t* k_dst =
          area<uint32_t>(layout.keys) + packed_keys / kAmxKeyTile * shape.key_tile_words();
      kt.pack_key_tile(k, p.k.row_stride, first, d, shape.dp, k_dst);
      kt.pack_key_tile(keys > kAmxKeyTile ? k + kAmxKeyTile * p.k.row_stride : k, p.k.row_stride,
                       keys - first, d, shape.dp, k_dst + shape.key_tile_words());
      const auto* v = static_cast<const uint16_t*>(
          row_address(p.v, p.dtype, seq, b.k_begin + packed_keys, kv_head));
      kt.pack_value_chunk(
          v, p.v.row_stride, keys, d, shape.d_tiles,
          area<uint32_t>(layout.values) + packed_keys / kAmxKeyChunk * shape.value_chunk_words());
    }
  }

  void run(int64_t seq, int64_t head, int64_t q0) {
    const SeqBounds b = p.bounds(seq);
    if (!starts_block(q0, b.q_len, block_rows)) return;
    const int64_t rows = block_span(q0, b.q_len, block_rows);
    const int64_t lanes = pad_lanes(rows);
    const int64_t kv_head = head / p.group_size();
    uint16_t* q = area<uint16_t>(layout.q);
    float* s = area<float>(layout.s);
    uint16_t* probs = area<uint16_t>(layout.p);
    float* o = area<float>(layout.o);
    float* row_max = area<float>(layout.row_max);
    float* row_sum = area<float>(layout.row_sum);
    int64_t* visible = area<int64_t>(layout.visible);

    kt.pack_queries(
        static_cast<const uint16_t*>(row_address(p.q, p.dtype, seq, b.q_begin + q0, head)),
        p.q.row_stride, rows, shape.head_dim, shape.dp, lanes, q);
    std::fill(row_max, row_max + lanes, -std::numeric_limits<float>::infinity());
    std::fill(row_sum, row_sum + lanes * kAmxSumLanes, 0.0f);
    // Keys past what the last row may see are hidden from every row of the block.
    const int64_t visible_end = p.visible_keys(q0 + rows - 1, b.q_len, b.k_len);
    // The first key block's P V writes every O tile (see AmxValuesArgs::accumulate); without one,
    // finish reads O as it is.
    if (visible_end <= 0) {
      std::memset(o, 0, static_cast<size_t>(lanes * shape.ld_o) * sizeof(float));
    }
    for (int64_t k0 = 0, keys = 0; k0 < visible_end; k0 += keys) {
      keys = block_span(k0, visible_end, block_keys);
      pack_keys_until(seq, kv_head, b, k0 + keys);
      const int64_t key_tiles = round_up(keys, kAmxKeyTile) / kAmxKeyTile;
      const int64_t key_chunks = round_up(keys, kAmxKeyChunk) / kAmxKeyChunk;
      const int64_t ld = key_chunks * kAmxKeyChunk;
      const uint32_t* keys_t =
          area<uint32_t>(layout.keys) + k0 / kAmxKeyTile * shape.key_tile_words();
      const uint32_t* values =
          area<uint32_t>(layout.values) + k0 / kAmxKeyChunk * shape.value_chunk_words();
      const bool masked = block_needs_mask(p, b, q0, k0, keys);
      if (masked) {
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t seen = p.visible_keys(q0 + i, b.q_len, b.k_len) - k0;
          visible[i] = seen < 0 ? 0 : (seen > keys ? keys : seen);
        }
      }
      // lanes is rows rounded up to 16, so every group holds at least one row.
      for (int64_t g = 0; g < lanes; g += kGroupRows) {
        const int64_t group_lanes = std::min(kGroupRows, lanes - g);
        const int64_t group_rows = std::min(group_lanes, rows - g);
        float* group_o = o + g * shape.ld_o;
        kt.scores({q + g * shape.dp, keys_t, group_lanes / kAmxRows, key_tiles, shape.dp, s, ld});
        kt.softmax({s, ld, probs, ld, group_rows, group_lanes, keys, masked ? visible + g : nullptr,
                    p.scale * kLog2e, row_max + g, row_sum + g * kAmxSumLanes, group_o, shape.ld_o,
                    shape.ld_o});
        kt.values({probs, ld, values, group_lanes / kAmxRows, key_chunks, shape.d_tiles, group_o,
                   shape.ld_o, k0 > 0});
      }
    }
    kt.finish({o, shape.ld_o, rows, shape.head_dim, row_max, row_sum,
               static_cast<uint16_t*>(row_address(p.out, p.dtype, seq, b.q_begin + q0, head)),
               p.out.row_stride,
               p.lse.data != nullptr ? p.lse.at(seq, head, b.q_begin + q0) : nullptr,
               p.lse.row_stride});
  }
};

/// Query rows per block: halved from kLargestBlockRows while the threads would get fewer than
/// kTasksPerThread tasks each (kTasksPerThreadUncached where packed K/V passes the L2).
int64_t choose_block_rows(const Problem& p, int64_t streams, const AmxShape& shape) {
  const int64_t tasks_per_thread =
      shape.packed_bytes() > kCachedPackBytes ? kTasksPerThreadUncached : kTasksPerThread;
  int64_t rows = kLargestBlockRows;
  while (rows > kSmallestBlockRows &&
         streams * ((p.seqlen_q + rows - 1) / rows) < tasks_per_thread * requested_threads(p)) {
    rows /= 2;
  }
  return rows;
}

/// How many of a stream's blocks must be left for a thread that does not hold its K/V to take
/// one (schedule.h): taking block b costs the packing (p blocks' worth) and one block, and pays
/// when it ends before the owner, who is half a block into its current one on average, would
/// reach b: when more than 0.5 + p blocks are left.
int64_t helper_min_left(int64_t block_rows) {
  return 1 + (2 * kPackCostRows + block_rows) / (2 * block_rows);
}

}  // namespace

bool amx_forward_fits(const Problem& problem) {
  return AmxShape(problem.head_dim, problem.seqlen_k).packed_bytes() <= kPackedBudgetBytes;
}

void cpu_amx_forward(const Problem& problem, const AmxKernels& kernels) {
  const int64_t streams = problem.batch * problem.heads;
  const AmxShape shape(problem.head_dim, problem.seqlen_k);
  const AmxBlocks forced = amx_blocks_override();
  const int64_t block_rows =
      forced.rows != 0 ? forced.rows : choose_block_rows(problem, streams, shape);
  const int64_t block_keys = forced.keys != 0 ? forced.keys : kBlockKeys;
  const int64_t q_blocks = (problem.seqlen_q + block_rows - 1) / block_rows;
  const int64_t tasks = streams * q_blocks;
  if (tasks == 0) return;
  const int threads = thread_count(problem, tasks);
  const AmxScratch layout(shape, block_rows, block_keys);
  // Kept from call to call, as in forward.cpp: fresh pages fault at first touch.
  thread_local GrowingScratch kept_scratch;
  float* const scratch = kept_scratch.reserve(threads * layout.plan.size());
  StreamBlocks queue(streams, q_blocks, helper_min_left(block_rows));

#pragma omp parallel num_threads(threads)
  {
    kernels.begin_thread();
    AmxTask task{
        problem,    kernels,   shape, layout, scratch + omp_get_thread_num() * layout.plan.size(),
        block_rows, block_keys};
    StreamBlocks::Walk walk(queue, omp_get_thread_num(), threads);
    for (int64_t stream = 0, block = 0; walk.next(stream, block);) {
      task.run(stream / problem.heads, stream % problem.heads,
               query_block_at(block, q_blocks) * block_rows);
    }
    kernels.end_thread();
  }
}

}  // namespace cpu

std::string cpu_forward_kernel_name(const Problem& problem) {
  if (const cpu::AmxKernels* amx = cpu::amx_forward_kernels(problem)) return amx->name;
  return cpu_kernel_name();
}

}  // namespace flashvision::detail
