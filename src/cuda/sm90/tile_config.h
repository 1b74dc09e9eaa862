// Tile sizes and shared-memory layout of the sm90 forward kernel, per head-dim bucket: one
// constexpr table read by the host (launch geometry, support checks) and by the kernel.
#pragma once

#include <cstddef>

namespace flashvision::detail::sm90 {

/// Head-dim buckets the sm90 forward serves: the sm80 buckets (multiples of 16 up to 256) and 512
/// (the VAE's single head), which runs V and O in two 256-column halves.
inline constexpr int kHeadDimBuckets[] = {32, 48, 64, 80, 96, 128, 160, 192, 256, 512};

/// Smallest bucket holding `head_dim`, or 0 when none does.
constexpr int head_dim_bucket(long long head_dim) {
  for (int bucket : kHeadDimBuckets) {
    if (head_dim <= bucket) return bucket;
  }
  return 0;
}

/// Width in bytes of the shared-memory swizzle (and TMA box rows) of a bucket whose elements have
/// `element_bytes` bytes (2: f16 and bf16, 1: e4m3): the widest of 128, 64 and 32 bytes that
/// divides a row, so that 48 and 80 need no padding to 64 or 128 columns.
constexpr int swizzle_bytes(int bucket, int element_bytes = 2) {
  const int row_bytes = bucket * element_bytes;
  return row_bytes % 128 == 0 ? 128 : (row_bytes % 64 == 0 ? 64 : 32);
}

/// Columns of V and O one tile covers for a bucket: all of them up to 256 (the widest wgmma N and
/// the most O accumulators a thread can hold), 256 above.
constexpr int value_columns(int bucket) { return bucket > 256 ? 256 : bucket; }

/// Tiles per query block and head where each covers `value_cols` columns of V and O: one per
/// slice (two at 512 and in a sliced tile, whose slices recompute the same scores).
constexpr int value_slices(int bucket, int value_cols) {
  return (bucket + value_cols - 1) / value_cols;
}

/// Tiles per query block and head at the bucket's value_columns.
constexpr int value_slices(int bucket) { return value_slices(bucket, value_columns(bucket)); }

/// kBlockM query rows (64 per consumer warpgroup), kBlockN keys per step, kStages K/V buffers.
struct FwdTile {
  int block_m;
  int block_n;
  int stages;
  /// Consumer warpgroups: block_m / 64.
  constexpr int consumers() const { return block_m / 64; }
};

/// Forward tile of a bucket for long sequences, chosen on the H200 (docs/perf-notes.md, sm90 v3),
/// with 128 query rows (two consumer warpgroups). Up to D = 96 a third K/V stage keeps more loads
/// in flight, which short image sequences (ViTs) need most; at D = 128, 176-key blocks shrink the
/// share of barrier and softmax bookkeeping per FLOP on long sequences. Above, keys per step
/// shrink so that Q and two stages of K and V fit in the 227 KiB of shared memory a block may have.
constexpr FwdTile fwd_tile(int bucket) {
  if (bucket <= 96) return {128, 128, 3};
  if (bucket <= 128) return {128, 176, 2};
  if (bucket <= 160) return {128, 128, 2};
  if (bucket <= 192) return {128, 96, 2};
  if (bucket <= 256) return {128, 80, 2};
  // D = 512: a 128 KiB Q tile leaves room for 32-key K (32 KiB) and V halves (16 KiB) per stage.
  return {128, 32, 2};
}

/// Query rows of a tile of two consumer warpgroups: every bucket has them.
inline constexpr int kNarrowBlockM = 128;

/// Query rows of the bucket's wide tile (three consumer warpgroups), or 0 where it has none. Up to
/// D = 80 an exponential costs the MUFU pipe about as much as its share of the two GEMMs costs the
/// tensor cores, or more, so the softmax of two warpgroups has to hide behind the GEMMs of a third
/// rather than of one: 192-row tiles ran D = 64 at N = 4096 and 16384 1.20-1.22x as fast per row
/// as 128-row ones (bench/results/2026-11-29-h200-wg3), D = 72/80 1.15-1.42x
/// (bench/results/2026-11-29-h200-v7). Above D = 80, O and S need more than the 160 registers a
/// consumer of three gets.
constexpr int wide_block_m(int bucket) { return bucket <= 80 ? 192 : 0; }

/// Keys per step of the bucket's wide tile, or 0 where it has none: the long width up to D = 64;
/// 96 at D = 80, where S of 128 keys next to O passed the 160 registers (ptxas serialized the
/// wgmma).
constexpr int wide_block_n(int bucket) {
  if (bucket <= 64) return fwd_tile(bucket).block_n;
  return bucket == 80 ? 96 : 0;
}

/// The bucket's second key-block width, for short sequences, or 0 where it has none. Image
/// sequences are a few key blocks long, and the last block is mostly padding at the long width
/// (197 ViT-B tokens fill 256 keys at 128 per block): 208 keys hold them in one block (no online
/// rescale either), three blocks hold ViT-L/14-336's 577 (instead of five of 128), two 160-key
/// blocks ViT-H/14's 257 (instead of three), one 96-key block SD 1.5's 77 text tokens. The widths
/// keep every shared-memory panel (rows x swizzle bytes) a multiple of 1024 bytes, like the long
/// ones: a multiple of 8 keys at the 128-byte swizzle (D = 64), of 16 at 64 bytes (32), of 32 at
/// 32 bytes (48, 80). Wider buckets have none: their O accumulators leave too few of a consumer's
/// 240 registers for the S and P of a wider block.
constexpr int short_block_n(int bucket) {
  switch (bucket) {
    case 32:
    case 64: return 208;
    case 48: return 96;
    case 80: return 160;
    default: return 0;
  }
}

/// Query rows of a half tile: one consumer warpgroup, for problems whose 128-row tiles leave
/// most SMs idle (fwd_half_rows).
inline constexpr int kHalfBlockM = 64;

/// Keys per step of the bucket's half tile at its long width, or 0 where it has none: buckets 64,
/// 80, 128 and 160, the head dims of small image problems (SD 1.5's 16 x 16 level, D = 160; ViTs
/// and DiTs at batch 1 or 2).
constexpr int half_long_block_n(int bucket) {
  return bucket == 64 || bucket == 80 || bucket == 128 || bucket == 160 ? fwd_tile(bucket).block_n
                                                                        : 0;
}

/// Keys per step of the bucket's half tile at its short width, or 0 where it has none: buckets 64
/// and 80 (ViT-B's 197 tokens, ViT-H's 257).
constexpr int half_short_block_n(int bucket) {
  return bucket == 64 || bucket == 80 ? short_block_n(bucket) : 0;
}

/// Columns of V and O of the bucket's sliced tile of `block_m` rows, or 0 where it has none:
/// bucket 160's half tile in two slices of 96 columns (three 32-column panels of its 64-byte
/// swizzle; the second slice's last panel lies past every head dim of the bucket and loads as
/// zeros). Each slice computes a query block's scores and softmax again, but P V, V's loads and
/// the epilogue only for its columns, so a grid of few tiles (SD 1.5's 16 x 16 level: 64 half
/// tiles for 132 SMs) has twice the CTAs, each with a shorter chain. On the H200 SD 1.5's 16 x 16
/// level ran 4.6 % faster, at batch 1 6.2 %, its cross-attention 3 %
/// (bench/results/2026-12-03-s36, call 2).
constexpr int sliced_value_columns(int bucket, int block_m) {
  return bucket == 160 && block_m == kHalfBlockM ? 96 : 0;
}

/// Whether the bucket has a half tile with `block_n` keys per step.
constexpr bool half_tile_exists(int bucket, int block_n) {
  return block_n != 0 &&
         (block_n == half_long_block_n(bucket) || block_n == half_short_block_n(bucket));
}

/// The bucket's second width for long sequences, or 0 where it has none, taken wherever it costs
/// less than the long width by key_blocks_cost (its padded keys and per-block work). At D = 128,
/// 192 keys: Q and two stages then fill 225 KiB, so O is stored directly rather than staged. Timed
/// alone on the H200 against 176 (bench/results/2026-12-02-s22, call 7): N = 16384 -2.5 %, Flux
/// 1024 -4.4 % (4608 keys are 24 blocks of 192 and 27 of 176), Flux 2048 and video -1 %, N = 4096
/// level, N = 1024 +6.5 % (1152 keys for 1024), where the cost keeps 176.
constexpr int second_block_n(int bucket) { return bucket == 128 ? 192 : 0; }

/// The bucket's third key-block width, for text-token keys (cross-attention to a prompt), or 0
/// where it has none: 80 keys at D = 64 hold the 77 tokens of a CLIP prompt, the keys of every
/// cross-attention of SD 2.x and SDXL, in one block instead of one of 128 (40 % padding in the
/// S GEMM, the softmax and the P V GEMM, which bound these short calls: the H200 issued
/// instructions on 47 % of their active cycles). Bucket 48 (SD 1.5's D = 40) has none (at its
/// 32-byte swizzle a panel needs a multiple of 32 keys): its text keys run on bucket 64
/// (fwd_text_bucket).
constexpr int text_block_n(int bucket) { return bucket == 64 ? 80 : 0; }

/// Whether `block_n` is the bucket's text width (never where the bucket has none).
constexpr bool is_text_width(int bucket, int block_n) {
  return text_block_n(bucket) != 0 && block_n == text_block_n(bucket);
}

/// The bucket a forward of head-dim bucket `bucket` runs on for a longest key sequence of
/// `max_seqlen_k`: bucket 64's text tile for text-token keys at bucket 48 (SD 1.5's D = 40 against
/// a 77-token prompt), else its own. Those calls are short and bound by latency and memory, not by
/// the GEMMs that padding 48 columns to 64 enlarges: at bucket 64 they get the 80-key block instead
/// of 96 keys, 128-byte swizzled panels (bucket 48's 32-byte panels take three TMA boxes a tile)
/// and the paired direct stores of O. On the H200 SD 1.5's cross-attention (16 heads of 40) took
/// 17.8-18.0 us at bucket 48 and 16.2-16.4 us here (bench/results/2026-11-30-s19, call 1).
constexpr int fwd_text_bucket(int bucket, long long max_seqlen_k) {
  return bucket == 48 && max_seqlen_k <= text_block_n(64) ? 64 : bucket;
}

/// Whether the bucket's wide tile may replace its 128-row tile of `block_n` keys: at the long
/// width, at the text width (three consumers a tile of one text block, wide_tile_block_n: SD 1.5's
/// cross-attention 4.5 % faster on the H200, SDXL's 1.2 %, bench/results/2026-12-02-s31, call 1),
/// and where the wide tile has a width of its own (D = 80) at any width. Up to D = 64 the short
/// width has no wide counterpart: it serves short sequences, whose queries are short too (192-row
/// blocks would pad ViT-B's 197 queries to 384).
constexpr bool wide_tile_applies(int bucket, int block_n) {
  const int wide_n = wide_block_n(bucket);
  const int long_n = fwd_tile(bucket).block_n;
  return wide_n != 0 && (block_n == long_n || wide_n != long_n || is_text_width(bucket, block_n));
}

/// Keys per step of the bucket's wide tile where it replaces a 128-row tile of `block_n` keys: the
/// text width stays (one block of a prompt's tokens), any other becomes the wide tile's own.
constexpr int wide_tile_block_n(int bucket, int block_n) {
  return is_text_width(bucket, block_n) ? block_n : wide_block_n(bucket);
}

/// Whether the FP8 (e4m3) forward serves the bucket: head dims that are whole 16-byte TMA rows up
/// to 256, in buckets 64, 128 and 256 (one wgmma k-step of S = Q K is 32 of them).
constexpr bool fp8_bucket(int bucket) { return bucket == 64 || bucket == 128 || bucket == 256; }

/// Keys per step of the FP8 forward's long tiles of a bucket. Its P V takes V transposed
/// ([D][keys]: fp8 wgmma reads both operands K-major), stored as panels of D rows of
/// fp8_value_panel_keys keys. 192 at D = 128, where S, P and O of 192 keys fit a consumer's 240
/// registers and the GEMMs of a block run twice as fast as in bf16, so its fixed costs weigh
/// twice as much; 128 at D = 64 (whose wide tile's consumers have 160 registers) and D = 256 (O's
/// 128 registers).
constexpr int fp8_block_n(int bucket) { return bucket == 128 ? 192 : 128; }

/// The FP8 forward's second key width of a bucket (128-row tiles), or 0 where it has none. At
/// D = 64, 224 keys (seven k-steps of P V) hold ViT-B/16's 197 in one block, so that its tiles
/// run the cross-tile pipeline (at 128 keys they were two blocks, and ViT-B/16's FP8 kernel took
/// 30 % longer than our bf16 one on the H200: perf-notes, session 28); S, P and O of 224 keys fit
/// two consumers' 240 registers, not the wide tile's 160 (256 keys spilled where a tile has
/// several blocks). At D = 128, 128 keys pad lengths of whole 128s less (N = 1024: eight blocks
/// of 128 against six of 192, 1152 keys).
constexpr int fp8_second_block_n(int bucket) {
  return bucket == 64 ? 224 : (bucket == 128 ? 128 : 0);
}

/// Keys of a panel of the FP8 forward's transposed V: one row of the widest swizzle (128, 64 or
/// 32 bytes) that divides the block.
constexpr int fp8_value_panel_keys(int block_n) {
  return block_n % 128 == 0 ? 128 : (block_n % 64 == 0 ? 64 : 32);
}

/// Buffers of the FP8 forward's V blocks as TMA loads them ([keys][D]), where the producer
/// warpgroup's other warps transpose them into the V stages (fwd_value_transposer.cuh): two, so
/// that one block's load overlaps the transposition of the one before. Those kernels are compiled
/// apart from the ones that read V as a pass before them transposed it, which need no slots and
/// keep the shared memory for staging O.
inline constexpr int kFp8ValueStagingSlots = 2;

/// The FP8 forward's tile of a bucket with `block_m` rows and `block_n` keys, with as many K/V
/// stages as fit with O's staging (a stage is half of a 16-bit one's bytes). Its rows are the
/// 16-bit forward's choice at that width (fwd_block_m): 128, or the wide 192 at D = 64, where the
/// softmax bounds the tile as in bf16.
constexpr FwdTile fp8_fwd_tile(int bucket, int block_m, int block_n) {
  return {block_m, block_n, bucket <= 128 ? 3 : 2};
}

/// Whether the FP8 forward of the bucket has a tile of `block_m` rows and `block_n` keys: 128 rows
/// with the long or the second width, and the wide rows where the 16-bit forward's wide tile has
/// the FP8 long width.
constexpr bool fp8_tile_exists(int bucket, int block_m, int block_n) {
  const int long_n = fp8_block_n(bucket), second_n = fp8_second_block_n(bucket);
  if (!fp8_bucket(bucket) || (block_n != long_n && (second_n == 0 || block_n != second_n))) {
    return false;
  }
  return block_m == kNarrowBlockM || (block_m != 0 && block_m == wide_block_m(bucket) &&
                                      block_n == long_n && wide_block_n(bucket) == long_n);
}

/// The bucket's tile with `block_m` query rows and `block_n` keys per step for elements of
/// `element_bytes` bytes; every 16-bit tile of a bucket has its stages.
constexpr FwdTile fwd_tile(int bucket, int block_m, int block_n, int element_bytes = 2) {
  FwdTile t = element_bytes == 1 ? fp8_fwd_tile(bucket, block_m, block_n) : fwd_tile(bucket);
  t.block_m = block_m;
  t.block_n = block_n;
  return t;
}

/// Whether the bucket has that tile: 128 rows with its long, second, short or text key width, its
/// wide rows with the wide tile's width, or a half tile (half_tile_exists); in FP8 (`element_bytes`
/// 1) one of its FP8 tiles.
constexpr bool fwd_tile_exists(int bucket, int block_m, int block_n, int element_bytes = 2) {
  if (element_bytes == 1) return fp8_tile_exists(bucket, block_m, block_n);
  if (block_m == kHalfBlockM) return half_tile_exists(bucket, block_n);
  const int long_n = fwd_tile(bucket).block_n;
  const int second_n = second_block_n(bucket);
  const int short_n = short_block_n(bucket);
  if (block_m == kNarrowBlockM) {
    return block_n == long_n || (second_n != 0 && block_n == second_n) ||
           (short_n != 0 && block_n == short_n) || is_text_width(bucket, block_n);
  }
  return block_m != 0 && block_m == wide_block_m(bucket) &&
         (block_n == wide_block_n(bucket) || is_text_width(bucket, block_n));
}

/// What a key block costs beyond its keys, in keys: barrier waits, the ping-pong turn, row-max
/// and row-sum reductions and the O rescale. Estimated from sm90 v3, where 192-key blocks ran
/// D = 64 at N = 4096 4 % faster than 128-key ones (22 blocks against 32).
inline constexpr int kBlockOverheadKeys = 32;
/// The short width serves sequences of at most this many of its blocks; longer ones keep the
/// long width, which was tuned on them and whose padding is then a small share of the keys.
inline constexpr int kShortWidthMaxBlocks = 4;

/// Modelled cost of `keys` keys in blocks of `block_n`: padded keys plus a per-block overhead.
constexpr long long key_blocks_cost(long long keys, int block_n) {
  return (keys + block_n - 1) / block_n * (block_n + kBlockOverheadKeys);
}

/// Key-block width of the FP8 forward of a bucket for a longest key sequence of `max_seqlen_k`: at
/// D = 64 the second width where the keys need more than one long block and fit one of it; at
/// D = 128 the width key_blocks_cost prices lower (the long one on a tie); else the long width.
constexpr int fp8_fwd_block_n(int bucket, long long max_seqlen_k) {
  const int long_n = fp8_block_n(bucket), second_n = fp8_second_block_n(bucket);
  if (second_n == 0) return long_n;
  if (second_n > long_n) {
    return max_seqlen_k > long_n && max_seqlen_k <= second_n ? second_n : long_n;
  }
  return key_blocks_cost(max_seqlen_k, second_n) < key_blocks_cost(max_seqlen_k, long_n) ? second_n
                                                                                         : long_n;
}

/// Query tiles that may read each V block of the FP8 forward (query blocks times the GQA group)
/// where the kernel transposes V itself: 8 up to D = 128, 4 above. Each of them transposes the
/// block again, in the producer warpgroup's three warps beside the GEMMs, while a pass before the
/// kernel moves V through device memory twice, once. On the H200 (bench/results/2026-12-02-s29,
/// call 2, against the pass in alternated processes) the kernel's transposition took ViT-B/16 0.57x
/// the time, ViT-L/14 (5 tiles) 0.88x, ViT-H/14 (3) 0.90x, SD 1.5 32 x 32 (8) 0.69x, D = 64 and 128
/// at N = 1024 (6, 8) 0.92x and 0.90x, SD 1.5 16 x 16 (D = 256, 2) 0.66x; D = 256 at N = 1024 (8)
/// 1.03x; from 22 tiles 1.00-1.08x at D = 64 and 1.23-1.43x at D = 128 and 256, where the GEMMs
/// outran the transposition (not profiled).
constexpr int fp8_kernel_transposes_max(int bucket) { return bucket <= 128 ? 8 : 4; }

/// Whether the FP8 forward transposes V in the kernel (FwdParams::fp8_values_transposed 0) for
/// `num_m_blocks` query blocks of a GQA group of `group` heads a kv head and a longest key sequence
/// of `max_seqlen_k` in blocks of `block_n`: where the tiles are one key block each (each block
/// read once or twice: SDXL's cross-attention 0.74x the pass's time) or few read each V block
/// (fp8_kernel_transposes_max).
constexpr bool fp8_values_in_kernel(int bucket, int block_n, long long max_seqlen_k,
                                    long long num_m_blocks, long long group) {
  return max_seqlen_k <= block_n || num_m_blocks * group <= fp8_kernel_transposes_max(bucket);
}

/// Key-block width of the forward of a bucket for a longest key sequence of `max_seqlen_k`: the
/// text width where `text_width` allows it, the bucket has one and the sequence fits one of its
/// blocks; else the second long width where the bucket has one and it costs strictly less than
/// the long width; else the short width where the bucket has one, the sequence fits
/// kShortWidthMaxBlocks of its blocks and it costs strictly less than the long width; otherwise
/// the long width.
constexpr int fwd_block_n(int bucket, long long max_seqlen_k, bool text_width = true) {
  const int long_n = fwd_tile(bucket).block_n;
  const int second_n = second_block_n(bucket);
  const int short_n = short_block_n(bucket);
  const int text_n = text_block_n(bucket);
  if (text_width && text_n != 0 && max_seqlen_k <= text_n) return text_n;
  if (second_n != 0 &&
      key_blocks_cost(max_seqlen_k, second_n) < key_blocks_cost(max_seqlen_k, long_n)) {
    return second_n;
  }
  if (short_n == 0 || max_seqlen_k > static_cast<long long>(kShortWidthMaxBlocks) * short_n) {
    return long_n;
  }
  return key_blocks_cost(max_seqlen_k, short_n) < key_blocks_cost(max_seqlen_k, long_n) ? short_n
                                                                                        : long_n;
}

/// Speed per query row of a wide tile against a 128-row one, as a ratio: 6/5, as measured at
/// D = 64 (wide_block_m).
inline constexpr int kWideSpeedNum = 6;
inline constexpr int kWideSpeedDen = 5;

/// Query rows per tile of the forward of a bucket with `block_n` keys per step, for `seqlen_q`
/// query rows (the longest sequence in varlen mode) of `batch_heads` (sequence, head) pairs on a
/// device with `sm_count` SMs: the wide rows where the bucket's wide tile applies at this width
/// (it then runs with its own width, wide_block_n) and the busiest CTA of the persistent schedule
/// does not take longer with them. Its time is modelled as
/// its tiles (waves of sm_count tiles) times their rows over their speed, so that padding of
/// short query sequences and a wave added by the wide tiles both count.
constexpr int fwd_block_m(int bucket, int block_n, long long seqlen_q, long long batch_heads,
                          int sm_count) {
  const int wide = wide_block_m(bucket);
  if (!wide_tile_applies(bucket, block_n)) return kNarrowBlockM;
  const long long sms = sm_count > 0 ? sm_count : 1;
  const auto waves = [&](int rows) {
    const long long tiles = (seqlen_q + rows - 1) / rows * batch_heads;
    return (tiles + sms - 1) / sms;
  };
  return waves(wide) * wide * kWideSpeedDen <= waves(kNarrowBlockM) * kNarrowBlockM * kWideSpeedNum
             ? wide
             : kNarrowBlockM;
}

/// Whether the 16-bit forward of a bucket with `block_n` keys per step runs half tiles for
/// `seqlen_q` query rows (the longest sequence in varlen mode) of `batch_heads` (sequence, head)
/// pairs on `sm_count` SMs: where the bucket has one at that width and they all fit one wave, so
/// that twice as many SMs share the work as with 128-row tiles, each with half the GEMMs of a
/// 128-row tile (SD 1.5's 16 x 16 level: 32 tiles of 128 rows, 64 of 64, for 132 SMs).
constexpr bool fwd_half_rows(int bucket, int block_n, long long seqlen_q, long long batch_heads,
                             int sm_count) {
  return half_tile_exists(bucket, block_n) &&
         (seqlen_q + kHalfBlockM - 1) / kHalfBlockM * batch_heads <= sm_count;
}

/// Whether a forward of `tiles` tiles of `block_m` rows (one value slice each) takes the bucket's
/// sliced tile: where it has one and all the slices fit one wave on `sm_count` SMs. Where they
/// would need two, the tiles whole run faster: SD 1.5's 16 x 16 level at batch 4 (128 half tiles)
/// took 12.3 us as 128 half tiles and 13.1 us as 64 128-row tiles, which the host took instead of
/// 256 sliced ones (bench/results/2026-12-03-s36, call 2).
constexpr bool fwd_value_sliced(int bucket, int block_m, long long tiles, int sm_count) {
  const int cols = sliced_value_columns(bucket, block_m);
  return cols != 0 && tiles * value_slices(bucket, cols) <= sm_count;
}

/// Whether the bucket's tiles of `block_m` rows and `block_n` keys have the cross-tile kernel
/// (fwd_consumer.cuh's run_cross_tile): the 128-row tiles of two consumers, whose short key widths
/// serve the short image sequences, and the wide tile at the text width; the other wide tiles'
/// three consumers keep the per-tile loop.
constexpr bool fwd_cross_tile_compiled(int bucket, int block_m, int block_n) {
  return block_m == kNarrowBlockM ||
         (block_m == wide_block_m(bucket) && is_text_width(bucket, block_n));
}

/// Whether the forward's consumers pipeline across tiles (FwdParams::cross_tile): every unit of
/// the schedule must be a whole tile of exactly one key block of `block_n` keys, which holds for
/// dense (not varlen) non-causal problems of 1 to block_n keys whose last wave is not split.
/// ViT-B/16's 197 tokens (one 208-key block) and cross-attention to 77 text tokens qualify.
constexpr bool fwd_cross_tile(int bucket, int block_m, int block_n, long long seqlen_k, bool causal,
                              bool varlen, bool split) {
  return fwd_cross_tile_compiled(bucket, block_m, block_n) && !causal && !varlen && !split &&
         seqlen_k >= 1 && seqlen_k <= block_n;
}

/// Keys of a tile's first key block (the sequence's last, which the consumers take first) that
/// the narrow-first kernel of the bucket's tile of `block_m` rows and `block_n` keys computes
/// with, or 0 where the tile has none (FwdParams::narrow_first): a multiple of 16 (P V's k-step).
/// Bucket 64's 208-key width with 176 (ViT-L/14 at 336 px: 577 keys = 2 x 208 + 161), bucket 80's
/// wide tile with 80 of 96 (ViT-H/14: 257 = 2 x 96 + 65). On the H200 against the same kernels
/// with the whole block (bench/results/2026-12-03-s35, call 2): ViT-L/14 -3.1 %, ViT-H/14
/// -2.0 %. Bucket 128's 192-key width with 64 went, D = 128 at N = 4096 -1.1 % and at 16384
/// +0.8 %: a tile's first block is one of its 22 or 86 there.
constexpr int narrow_first_keys(int bucket, int block_m, int block_n) {
  if (bucket == 64 && block_m == kNarrowBlockM && block_n == short_block_n(bucket)) return 176;
  if (bucket == 80 && block_m == wide_block_m(bucket) && block_n == wide_block_n(bucket)) return 80;
  return 0;
}

/// Whether a forward runs the narrow-first kernel (FwdParams::narrow_first): where the tile has
/// one and every unit is a whole tile of two key blocks or more (tiles of one block mostly take
/// the cross-tile kernel) of the same `seqlen_k` keys (dense, non-causal, unsplit, no clusters),
/// whose last block holds at most narrow_first_keys of them; the keys past those are past the
/// sequence.
constexpr bool fwd_narrow_first(int bucket, int block_m, int block_n, long long seqlen_k,
                                bool causal, bool varlen, bool split, bool multicast) {
  const int keys = narrow_first_keys(bucket, block_m, block_n);
  const long long last = block_n > 0 ? seqlen_k % block_n : 0;
  return keys != 0 && !causal && !varlen && !split && !multicast && seqlen_k > block_n &&
         last != 0 && last <= keys;
}

/// Key blocks a tile's rows must walk (the longest key sequence's) for Q scaled in the kernel to
/// pay: the scaling lies between a tile's Q load and its first GEMM, and only the blocks after a
/// row's first take the softmax's anchored fast path. With the consumers scaling their own rows,
/// ViT-L/14's three 208-key blocks ran 3.2 % faster with it and ViT-H/14's three 96-key blocks
/// level (+0.3 %; bench/results/2026-12-03-s38, call 1); two blocks were not measured.
inline constexpr long long kPrescaleMinKeyBlocks = 3;

/// Whether a 16-bit forward scales Q in the kernel (FwdParams::q_prescaled, fwd_query_scaler.cuh)
/// with the factor `q_scale` (the softmax's scale * log2(e)):
/// - only where no LSE is asked for: rounding Q * q_scale moves the LSE by about one step of
///   the scores' precision (an inference forward; one for training keeps the exact scale);
/// - not past 1, so that the scaled Q cannot overflow f16;
/// - up to D = 128: at D = 256 the FFMA it saves is a smaller share of a score's work than the
///   scaling of a Q of 256 columns costs (N = 4096 +0.7-1.1 % on the H200, sessions 37 and 38);
/// - not for one-block tiles (the cross-tile kernel), and only where the longest key sequence
///   spans kPrescaleMinKeyBlocks blocks of `block_n` or more.
constexpr bool fwd_q_prescaled(int bucket, float q_scale, long long seqlen_k, int block_n,
                               bool cross_tile, bool lse_requested) {
  return !lse_requested && q_scale <= 1.0f && value_columns(bucket) <= 128 && !cross_tile &&
         block_n > 0 && (seqlen_k + block_n - 1) / block_n >= kPrescaleMinKeyBlocks;
}

/// CTAs of a cluster that share each K and V block of the forward (fwd_kv_multicast): each loads
/// 1/kKvMulticastCtas of the block's rows into all of them with one TMA multicast.
inline constexpr int kKvMulticastCtas = 2;

/// Whether the tile has the kernel that shares K and V within a cluster: the long, second and
/// wide widths, which serve long sequences (a short or text width's tile is one to four blocks
/// that L2 serves), where one value slice covers V and a CTA's share of a block's rows is whole
/// swizzle atoms of 8 rows, where the TMA's swizzle pattern, a function of the address bits within
/// an atom's 8 x swizzle bytes, continues the block's (D = 80's 96-key wide tile: 48 rows of 32
/// bytes, 1536 bytes, six atoms of 256).
/// Bucket 32 is left out: on the H200 its cluster kernel hung on every problem that ran it, while
/// buckets 48 to 256 passed (bench/results/2026-12-01-s25, calls 2 and 3); the cause is not known.
constexpr bool fwd_multicast_compiled(int bucket, int block_m, int block_n) {
  if (bucket == 32) return false;
  const bool long_width = block_m == kNarrowBlockM && (block_n == fwd_tile(bucket).block_n ||
                                                       block_n == second_block_n(bucket));
  const bool wide =
      block_m != 0 && block_m == wide_block_m(bucket) && block_n == wide_block_n(bucket);
  return (long_width || wide) && value_slices(bucket) == 1 && block_n % (kKvMulticastCtas * 8) == 0;
}

/// Every bucket's wide tile has a kernel that shares K and V where its 128-row tile at the long
/// width has one, so choosing the rows of a tile never gives up the sharing (session 25 took 128
/// rows where D = 80's wide tile had none).
static_assert([] {
  for (const int bucket : kHeadDimBuckets) {
    if (wide_block_m(bucket) != 0 &&
        fwd_multicast_compiled(bucket, wide_block_m(bucket), wide_block_n(bucket)) !=
            fwd_multicast_compiled(bucket, kNarrowBlockM, fwd_tile(bucket).block_n)) {
      return false;
    }
  }
  return true;
}());

/// Whether the forward runs in clusters of kKvMulticastCtas CTAs that share every K and V block
/// (FwdParams::kv_multicast). The CTAs of a cluster take adjacent units of the schedule, which
/// must then read the same key blocks: adjacent query blocks of one head (fwd_tile_order.cuh), so
/// a whole number of pairs of query blocks per head (`num_m_blocks` even) and the same keys for
/// every query block (dense, non-causal). Split units and the cross-tile kernel keep their CTAs
/// apart.
constexpr bool fwd_kv_multicast(int bucket, int block_m, int block_n, long long num_m_blocks,
                                long long seqlen_k, bool causal, bool varlen, bool split,
                                bool cross_tile) {
  return fwd_multicast_compiled(bucket, block_m, block_n) && num_m_blocks % kKvMulticastCtas == 0 &&
         num_m_blocks > 0 && seqlen_k >= 1 && !causal && !varlen && !split && !cross_tile;
}

/// Whether sharing K and V pays for a bucket by default: where its panels are 32 bytes wide (48 and
/// 80), so that every TMA box moves rows of 32 bytes and each CTA issues half as many of them. On
/// the H200 (bench/results/2026-12-01-s25, calls 4 and 5, alternated processes): DiT-XL/2 (bucket
/// 80) 0.196-0.198 ms on 128-row tiles sharing K and V against 0.223 ms on its wide tiles (0.274
/// on 128-row tiles without), SD 1.5 64 x 64 (bucket 48) -6 %. Elsewhere it moved long sequences
/// held at the power limit by under 1 % and cost up to 10 % on shorter ones in one run (D = 128
/// at N = 1024 and 4096, D = 256 at N = 1024; not profiled). The grid lost no SMs there: the H200
/// holds 66 clusters of two of these CTAs.
constexpr bool kv_multicast_pays(int bucket) { return swizzle_bytes(bucket) == 32; }

/// Waves of tiles (on all SMs) a problem needs before its forward shares K and V by default: SD 1.5
/// 32 x 32 (bucket 80, 128 tiles, one each for 128 CTAs) took 3.5 % longer sharing them (call 4).
inline constexpr int kKvMulticastMinWaves = 2;

/// Key blocks a tile walks before its forward shares K and V by default: ViT-H/14 (bucket 80, 257
/// keys in three 96-key blocks of the wide tile) took 2 % longer sharing them, DiT-XL/2 (1024 keys,
/// eleven blocks) 13 % less (bench/results/2026-12-02-s26, call 1). Between the two, not measured.
inline constexpr int kKvMulticastMinKeyBlocks = 8;

/// Whether the forward shares K and V by default (FLASHVISION_SM90_FWD_MULTICAST=auto): where it
/// applies (fwd_kv_multicast, taken as unsplit: a forward that shares K and V splits no tile),
/// pays for the bucket, the problem has kKvMulticastMinWaves waves of `tiles` on `sm_count` SMs
/// and its tiles kKvMulticastMinKeyBlocks blocks of `block_n` keys.
constexpr bool fwd_kv_multicast_default(int bucket, int block_m, int block_n,
                                        long long num_m_blocks, long long tiles, long long seqlen_k,
                                        bool causal, bool varlen, bool cross_tile, int sm_count) {
  return fwd_kv_multicast(bucket, block_m, block_n, num_m_blocks, seqlen_k, causal, varlen, false,
                          cross_tile) &&
         kv_multicast_pays(bucket) &&
         tiles >= static_cast<long long>(kKvMulticastMinWaves) * sm_count &&
         (seqlen_k + block_n - 1) / block_n >= kKvMulticastMinKeyBlocks;
}

/// Threads of a block: the consumer warpgroups (64 query rows each) and one producer warpgroup.
constexpr int fwd_threads(const FwdTile& t) { return (t.consumers() + 1) * 128; }

/// Registers a CTA of `threads` threads holds when it is launched alone on an SM: the per-thread
/// share of the SM's 64 K, rounded down to the allocation unit of 8. setmaxnreg only moves
/// registers between the CTA's warpgroups (an increase waits until others have been freed), so
/// the warpgroups' budgets must add up to at most this, or the consumers wait forever.
constexpr int launch_registers(int threads) { return 65536 / threads / 8 * 8 * threads; }

/// Registers (setmaxnreg) of a producer and of a consumer thread: the producer gives up all but
/// what issuing copies needs, and the consumers share the rest of the SM's 64 K registers.
inline constexpr int kProducerRegisters = 24;
constexpr int consumer_registers(const FwdTile& t) { return t.consumers() <= 2 ? 240 : 160; }

/// Bytes of the 8-byte mbarriers: per Q buffer full and empty, per stage K full, V full, K empty,
/// V empty, and with V transposed in the kernel (`staging_slots` > 0) per staging slot full and
/// empty and an 8-byte word that tells the transposing warps the loads have ended.
constexpr std::size_t barrier_bytes(int q_buffers, int stages, int staging_slots = 0) {
  return 8 * (2 * q_buffers + 4 * stages + 3 * staging_slots);
}

/// Shared memory one block may use on sm90 (the opt-in maximum of the H100 and H200).
inline constexpr std::size_t kMaxSmemBytes = 227 * 1024;

/// Q buffers of the tile: two at the text width, so that the producer loads the next tile's Q
/// while this one runs; one elsewhere, which the producer refills once the tile's last S = Q K
/// has read it. A text tile is one block of a few hundred cycles of GEMM, and its Q load is the
/// longest wait it has: on the H200 two buffers ran SD 1.5's cross-attention 4.3 % faster and
/// SDXL's 0.8 % (bench/results/2026-12-01-s23, call 6), but cost the D = 64 sweep 1.6-2.3 %, SD
/// 1.5 64 x 64 4 % and ViT-B/16 1 % where every tile up to D = 96 had them (call 4).
constexpr int fwd_q_buffers(int bucket, int block_m, int block_n) {
  return block_m != kHalfBlockM && is_text_width(bucket, block_n) ? 2 : 1;
}

/// Bytes of the pipeline of a tile of `element_bytes` elements: its Q buffers, the K and V stages
/// (V of `value_cols` columns; 0: value_columns), `staging_slots` V staging slots (FP8 with V
/// transposed in the kernel: kFp8ValueStagingSlots), the barriers, and 1 KiB of slack to align the
/// swizzled tiles to 1024 bytes (the 128-byte swizzle pattern's period).
constexpr std::size_t fwd_pipeline_bytes(int bucket, int block_m, int block_n,
                                         int element_bytes = 2, int staging_slots = 0,
                                         int value_cols = 0) {
  if (value_cols == 0) value_cols = value_columns(bucket);
  const FwdTile t = fwd_tile(bucket, block_m, block_n, element_bytes);
  const int q_buffers = fwd_q_buffers(bucket, block_m, block_n);
  const std::size_t tiles =
      (static_cast<std::size_t>(q_buffers * t.block_m + t.stages * t.block_n) * bucket +
       static_cast<std::size_t>(t.stages + staging_slots) * t.block_n * value_cols) *
      element_bytes;
  return tiles + barrier_bytes(q_buffers, t.stages, staging_slots) + 1024;
}

/// Bytes of one 64-column panel of a consumer warp's O staging buffer: 16 rows of 128 bytes.
inline constexpr std::size_t kStagingPanelBytes = 16 * 128;

/// 64-column panels of O a consumer warp would stage to write its `value_cols` columns (0:
/// value_columns) at once; bucket 64 stores directly: staged, its long sequences ran 2–3 % slower
/// on the H200 (bench/results/2026-11-29-h200-sm90-epilogue-exp2), the short ones within 1 %.
constexpr int wanted_epilogue_panels(int bucket, int value_cols = 0) {
  if (value_cols == 0) value_cols = value_columns(bucket);
  return bucket == 64 ? 0 : (value_cols + 63) / 64;
}

/// Bytes of the O staging buffers of all consumer warps with `panels` panels each (O is 16-bit
/// whatever the inputs are).
constexpr std::size_t staging_bytes(int block_m, int panels) {
  return static_cast<std::size_t>(panels) * (block_m / 64) * 4 * kStagingPanelBytes;
}

/// 64-column panels of O each consumer warp stages in shared memory so that the epilogue writes
/// whole 16-byte chunks of rows: as many as O has, or as fit next to the pipeline (O then passes
/// through in several rounds). 0 where nothing fits (D = 256 and 512), which keeps the direct
/// stores from the accumulators, and at bucket 64 (wanted_epilogue_panels).
constexpr int epilogue_panels(int bucket, int block_m, int block_n, int element_bytes = 2,
                              int staging_slots = 0, int value_cols = 0) {
  const int wanted = wanted_epilogue_panels(bucket, value_cols);
  const std::size_t per_panel = staging_bytes(block_m, 1);
  const std::size_t pipeline =
      fwd_pipeline_bytes(bucket, block_m, block_n, element_bytes, staging_slots, value_cols);
  const int fitting =
      pipeline >= kMaxSmemBytes ? 0 : static_cast<int>((kMaxSmemBytes - pipeline) / per_panel);
  return wanted < fitting ? wanted : fitting;
}

/// Dynamic shared memory of the forward tile (V and O of `value_cols` columns; 0: value_columns):
/// the pipeline and the consumer warps' O staging.
constexpr std::size_t fwd_smem_bytes(int bucket, int block_m, int block_n, int element_bytes = 2,
                                     int staging_slots = 0, int value_cols = 0) {
  return fwd_pipeline_bytes(bucket, block_m, block_n, element_bytes, staging_slots, value_cols) +
         staging_bytes(block_m, epilogue_panels(bucket, block_m, block_n, element_bytes,
                                                staging_slots, value_cols));
}

}  // namespace flashvision::detail::sm90
