// Block sizes of the CPU passes: the largest tiles whose per-thread working set fits a budget
// sized for a 512 KiB L2 (Zen 3; Intel cores have more), shrunk when that would leave threads
// without work.
#pragma once

#include <cstdint>

#include "cpu/kernels.h"

namespace flashvision::detail::cpu {

/// Rounds `n` up to a multiple of kLanePad.
constexpr int64_t pad_lanes(int64_t n) { return (n + kLanePad - 1) / kLanePad * kLanePad; }

/// Floats between rows of a tile whose rows hold `n` floats: n padded to an odd number of cache
/// lines. The GEMMs and the softmax walk tiles down a column; with an even pitch, say 2^k lines,
/// 64 rows share 64 / 2^k of L1's 64 sets and evict each other.
constexpr int64_t tile_pitch(int64_t n) {
  const int64_t lines = (n + kLanePad - 1) / kLanePad;
  return (lines % 2 == 0 ? lines + 1 : lines) * kLanePad;
}

/// Length of the block that starts at `start` in a range ending at `end`: `block`, or all that is
/// left when that is at most 1.5 blocks. A small remainder (577 = 9 x 64 + 1 keys in ViT-L/14)
/// joins the last block instead of making a block of its own that costs a full block's overhead.
constexpr int64_t block_span(int64_t start, int64_t end, int64_t block) {
  const int64_t left = end - start;
  return left <= block + block / 2 ? left : block;
}

/// Whether the grid block at `start` (a multiple of `block`) starts a block of a range ending at
/// `end`, rather than lying past the end or inside the block before it.
constexpr bool starts_block(int64_t start, int64_t end, int64_t block) {
  return start < end && (start == 0 || block_span(start - block, end, block) == block);
}

/// Query rows (SIMD lanes) and keys per tile.
struct Tiling {
  int64_t block_q = 0;  ///< a multiple of kLanePad and of every ISA's GEMM panel (24, 48)
  int64_t block_k = 0;  ///< a multiple of every ISA's GEMM row block (4, 8)

  /// The longest query block block_span can make.
  constexpr int64_t max_rows() const { return block_q + block_q / 2; }
  /// The longest key block block_span can make.
  constexpr int64_t max_keys() const { return block_k + block_k / 2; }
  /// Floats between rows of the lanes-as-columns tiles (Q^T, S^T, O^T, ...).
  constexpr int64_t lane_pitch() const { return tile_pitch(max_rows()); }
};

/// The three kinds of task, which differ in what they keep per thread and what a bigger tile buys.
enum class Pass {
  forward,  ///< per query block: Q^T, O^T, S^T, K, V; big block_q reads K/V less often
  dq,       ///< per query block: Q^T, dO^T, dQ^T, S^T, dP^T, K, V; likewise
  dk_dv,    ///< per key block: K, V, dK, dV, Q^T, dO^T, Q, dO, S^T, dP^T; big block_k reads
            ///< (and repacks) Q and dO less often
};

/// Floats of one thread's tiles for full (not merged) blocks.
constexpr int64_t working_set_floats(Pass pass, int64_t head_dim, const Tiling& t) {
  const int64_t lanes = tile_pitch(t.block_q);
  const int64_t key_rows = t.block_k * tile_pitch(head_dim);    // one of K, V, dK, dV
  const int64_t query_t = head_dim * lanes;                     // one of Q^T, O^T, dO^T, dQ^T
  const int64_t query_rows = t.block_q * tile_pitch(head_dim);  // one of Q, dO (row-major)
  const int64_t scores = t.block_k * lanes;                     // one of S^T, dP^T
  switch (pass) {
    case Pass::forward: return 2 * key_rows + 2 * query_t + scores;
    case Pass::dq: return 2 * key_rows + 3 * query_t + 2 * scores;
    case Pass::dk_dv: return 4 * key_rows + 2 * query_t + 2 * query_rows + 2 * scores;
  }
  return 0;
}

/// Among the sizes whose working set fits the L2 budget: the largest block along the pass's task
/// dimension (block_q, or block_k for dk_dv), then the larger other block; the smallest tiles when
/// none fits (head_dim near 512).
inline Tiling largest_fitting_tiling(Pass pass, int64_t head_dim) {
  // Above the 512 KiB L2 on purpose: each key block sweeps Q^T and O^T once, panel by panel,
  // which the prefetchers stream well. On Zen 3 (2 threads, N = 4096) block_q = 384 beat 192
  // by ~10% at head_dim 64 and 128, though 384 x 128 tiles overflow L2.
  constexpr int64_t kL2BudgetFloats = 640 * 1024 / 4;
  constexpr int64_t kQueryBlocks[] = {384, 192, 96, 48};
  constexpr int64_t kKeyBlocks[] = {256, 128, 64, 32};
  // Other-dimension blocks below these make the per-block overheads (softmax rescale, GEMM
  // prologues) count; a smaller task block is the better trade.
  constexpr int64_t kMinorKeyBlocks[] = {128, 64};
  constexpr int64_t kMinorQueryBlocks[] = {96, 48};
  const bool by_keys = pass == Pass::dk_dv;
  for (const int64_t major : by_keys ? kKeyBlocks : kQueryBlocks) {
    for (const int64_t minor : by_keys ? kMinorQueryBlocks : kMinorKeyBlocks) {
      const Tiling t = by_keys ? Tiling{minor, major} : Tiling{major, minor};
      if (working_set_floats(pass, head_dim, t) <= kL2BudgetFloats) return t;
    }
  }
  return {48, 32};
}

/// Tiles for `pass`: the largest that fit L2, with the task block then halved (not below 96 query
/// rows or 64 keys) until there are at least 4 tasks per thread. `task_rows` is seqlen_q
/// (seqlen_k for dk_dv) and `streams` the number of (sequence, head) pairs.
///
/// `cheap_tasks`: a forward task costs little beyond its arithmetic because its K and V are read
/// in place, not packed per task; then halve down to 48 query rows and until there are 8 tasks per
/// thread. Finer tasks even out threads that run at unequal speeds (a shared machine's) at the end
/// of a call, where sd15-self-16 had 3 tasks per thread and sd15-self-32 5.
inline Tiling choose_tiling(Pass pass, int64_t head_dim, int64_t task_rows, int64_t streams,
                            int64_t threads, bool cheap_tasks = false) {
  Tiling t = largest_fitting_tiling(pass, head_dim);
  const bool by_keys = pass == Pass::dk_dv;
  const bool fine = cheap_tasks && pass == Pass::forward;
  int64_t& major = by_keys ? t.block_k : t.block_q;
  const int64_t smallest = by_keys ? 64 : (fine ? 48 : 96);
  const int64_t tasks_per_thread = fine ? 8 : 4;
  while (major > smallest &&
         streams * ((task_rows + major - 1) / major) < tasks_per_thread * threads) {
    major /= 2;
  }
  return t;
}

}  // namespace flashvision::detail::cpu
