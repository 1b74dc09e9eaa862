// The tile operations of the AMX forward in plain C++, with the semantics of TDPBF16PS (Intel
// SDM): per output element, for each bf16 pair in turn, C += a0 * b0 then C += a1 * b1, each
// addition rounded to nearest even in fp32 (the bf16 products are exact), bf16 input denormals
// read as zero and fp32 output denormals flushed to zero. Lets every CPU run the AMX forward's
// packing, tiling and softmax (kernels_amx_emulated.cpp); the tests compare it with the reference.
#pragma once

#include <cstdint>
#include <cstring>

namespace flashvision::detail::cpu::isa_amx_emulated {

/// 8 tiles of 16 rows x 64 bytes, per thread (the real tile state is per thread too).
struct EmulatedTiles {
  static constexpr int kRows = 16;
  static constexpr int kBytes = 64;
  static constexpr int kDwords = kBytes / 4;

  struct Registers {
    alignas(64) uint32_t tile[8][kRows][kDwords];
  };
  static Registers& registers() {
    thread_local Registers state;
    return state;
  }

  static void configure() { std::memset(&registers(), 0, sizeof(Registers)); }
  static void release() {}

  template <int kTile>
  static void zero() {
    std::memset(registers().tile[kTile], 0, sizeof(registers().tile[kTile]));
  }
  template <int kTile>
  static void load(const void* data, int64_t stride_bytes) {
    for (int r = 0; r < kRows; ++r) {
      std::memcpy(registers().tile[kTile][r], static_cast<const char*>(data) + r * stride_bytes,
                  kBytes);
    }
  }
  template <int kTile>
  static void store(void* data, int64_t stride_bytes) {
    for (int r = 0; r < kRows; ++r) {
      std::memcpy(static_cast<char*>(data) + r * stride_bytes, registers().tile[kTile][r], kBytes);
    }
  }
  template <int kC, int kA, int kB>
  static void dot() {
    Registers& s = registers();
    for (int m = 0; m < kRows; ++m) {
      for (int n = 0; n < kDwords; ++n) {
        float c = as_float(s.tile[kC][m][n]);
        for (int k = 0; k < kDwords; ++k) {
          const uint32_t a = s.tile[kA][m][k], b = s.tile[kB][k][n];
          c = flush(c + bf16(a & 0xffffu) * bf16(b & 0xffffu));
          c = flush(c + bf16(a >> 16) * bf16(b >> 16));
        }
        s.tile[kC][m][n] = __builtin_bit_cast(uint32_t, c);
      }
    }
  }

 private:
  static float as_float(uint32_t bits) { return __builtin_bit_cast(float, bits); }
  /// A bf16 operand as fp32, denormals as (signed) zero.
  static float bf16(uint32_t h) {
    const uint32_t bits = (h & 0xffffu) << 16;
    return as_float((bits & 0x7f800000u) == 0 ? bits & 0x80000000u : bits);
  }
  /// A result with denormals flushed to (signed) zero.
  static float flush(float x) {
    const uint32_t bits = __builtin_bit_cast(uint32_t, x);
    return (bits & 0x7f800000u) == 0 ? as_float(bits & 0x80000000u) : x;
  }
};

}  // namespace flashvision::detail::cpu::isa_amx_emulated
