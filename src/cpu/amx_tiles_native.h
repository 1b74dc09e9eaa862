// The tile operations of the AMX forward as the real AMX-TILE / AMX-BF16 instructions. Only
// kernels_amx.cpp includes this (compiled with -mamx-tile -mamx-bf16). Tile numbers are template
// arguments because the instructions encode them.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace flashvision::detail::cpu::isa_amx {

/// Every one of the 8 tiles is configured as 16 rows of 64 bytes: 16 x 16 fp32 accumulators, or
/// 16 x 32 bf16 operands (pair rows of 16 dwords for B).
struct NativeTiles {
  /// The 64-byte operand of LDTILECFG (palette 1).
  struct alignas(64) Config {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
  };

  static constexpr Config all_full() {
    Config config;
    for (int t = 0; t < 8; ++t) {
      config.bytes_per_row[t] = 64;
      config.rows[t] = 16;
    }
    return config;
  }

  static void configure() {
    // In static storage, not on the stack: GCC 12's _tile_loadconfig tells the compiler it reads
    // only the first 8 bytes of its operand, so stores to the rest of a local could be dropped.
    static constexpr Config kConfig = all_full();
    _tile_loadconfig(&kConfig);
  }
  static void release() { _tile_release(); }

  // GCC's tile intrinsics paste their tile argument into the assembly text, so it must be a
  // literal: each tile number gets its own specialization below.
  template <int kTile>
  static void zero();
  template <int kTile>
  static void load(const void* data, int64_t stride_bytes);
  template <int kTile>
  static void store(void* data, int64_t stride_bytes);
  /// C += A B (bf16 pairs, fp32 accumulation); amx_body.h's four (C, A, B) triples.
  template <int kC, int kA, int kB>
  static void dot();
};

#define FLASHVISION_AMX_TILE(n)                                              \
  template <>                                                                \
  inline void NativeTiles::zero<n>() {                                       \
    _tile_zero(n);                                                           \
  }                                                                          \
  template <>                                                                \
  inline void NativeTiles::load<n>(const void* data, int64_t stride_bytes) { \
    _tile_loadd(n, data, stride_bytes);                                      \
  }                                                                          \
  template <>                                                                \
  inline void NativeTiles::store<n>(void* data, int64_t stride_bytes) {      \
    _tile_stored(n, data, stride_bytes);                                     \
  }
FLASHVISION_AMX_TILE(0)
FLASHVISION_AMX_TILE(1)
FLASHVISION_AMX_TILE(2)
FLASHVISION_AMX_TILE(3)
FLASHVISION_AMX_TILE(4)
FLASHVISION_AMX_TILE(5)
FLASHVISION_AMX_TILE(6)
FLASHVISION_AMX_TILE(7)
#undef FLASHVISION_AMX_TILE

#define FLASHVISION_AMX_DOT(c, a, b)        \
  template <>                               \
  inline void NativeTiles::dot<c, a, b>() { \
    _tile_dpbf16ps(c, a, b);                \
  }
FLASHVISION_AMX_DOT(0, 4, 6)
FLASHVISION_AMX_DOT(1, 4, 7)
FLASHVISION_AMX_DOT(2, 5, 6)
FLASHVISION_AMX_DOT(3, 5, 7)
#undef FLASHVISION_AMX_DOT

}  // namespace flashvision::detail::cpu::isa_amx
