// The forward's block sizes as FLASHVISION_CPU_FWD_BLOCKS (fp32 forward) and
// FLASHVISION_CPU_AMX_BLOCKS (AMX forward) ask for them, and its key split as
// FLASHVISION_CPU_FWD_KEY_SPLIT does: tuning knobs, so that tile sizes and the split can be
// measured on a CPU without rebuilding.
#pragma once

#include "cpu/tiling.h"

namespace flashvision::detail::cpu {

/// `chosen`, or the blocks FLASHVISION_CPU_FWD_BLOCKS="Q,K" sets (query rows a multiple of 16,
/// keys a multiple of 8, both up to 1024); throws Error naming the variable when it is malformed.
Tiling forward_tiling_override(const Tiling& chosen);

/// The AMX forward's blocks that FLASHVISION_CPU_AMX_BLOCKS="Q,K" sets: query rows a multiple of
/// 16 (a tile's rows) and keys a multiple of 32 (a packed V chunk), both up to 1024; {0, 0} when
/// it is unset or empty. Throws Error naming the variable when it is malformed.
struct AmxBlocks {
  int64_t rows = 0;
  int64_t keys = 0;
};
AmxBlocks amx_blocks_override();

/// FLASHVISION_CPU_FWD_KEY_SPLIT: -1 when unset, empty or "auto" (the problem decides), 0 for "0"
/// (never split), 1 for "1" (split every query block's keys in two); throws Error naming the
/// variable for any other value.
int forward_key_split_override();

}  // namespace flashvision::detail::cpu
