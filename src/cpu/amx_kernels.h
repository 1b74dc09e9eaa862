// The steps of the AMX-BF16 forward (amx_forward.cpp drives them), as a table of functions one
// translation unit provides: kernels_amx.cpp with the real tile instructions, reached only after
// CPUID and the kernel allow AMX, and kernels_amx_emulated.cpp with the same code over a portable
// emulation of the tiles (any CPU; the tests run it where AMX is missing).
//
// Only plain data crosses the table: the driver is compiled for the baseline ISA and must share no
// inline code with a TU built with AMX and AVX-512 flags (see src/cpu/CMakeLists.txt).
//
// Layouts (bf16 elements as uint16_t, "dword" = a pair of bf16 in one uint32_t):
//  - Q block: [lanes][dp] bf16, queries padded to lanes (a multiple of 16) and head_dim to dp (a
//    multiple of 32) with zeros: the A operand of S = Q K^T, read in place by the tiles.
//  - K^T of a key tile (16 keys): [dp / 2][16] dwords, row r holding (K[n][2r], K[n][2r + 1]) for
//    keys n: the B operand of S = Q K^T in AMX's pair ("VNNI") layout. Key tiles follow each other.
//  - V of a key chunk (32 keys): [d_tiles][16][16] dwords, for head-dim tile t row r holding
//    (V[2r][16t + n], V[2r + 1][16t + n]): the B operand of O += P V. Chunks follow each other.
//  - S: [lanes][ld_s] fp32 scores (unscaled); P: [lanes][ld_p] bf16, keys padded to 32 with zeros;
//    O: [lanes][ld_o] fp32, head_dim padded to 16 * d_tiles.
#pragma once

#include <cstdint>

namespace flashvision::detail::cpu {

/// Keys per K^T tile and per V chunk (AMX: 16 output columns, 32 bf16 of a dot product).
inline constexpr int64_t kAmxKeyTile = 16;
inline constexpr int64_t kAmxKeyChunk = 32;
/// Query rows per tile.
inline constexpr int64_t kAmxRows = 16;
/// Partial sums kept per row for the softmax's denominator (one AVX-512 vector): adding a block's
/// sums lane by lane needs no horizontal reduction per row and block, only one at the end.
inline constexpr int64_t kAmxSumLanes = 16;

/// Coefficients 1..4 of the softmax's 2^f on [0, 1) (the constant is 1; f = x - floor(x), so
/// the AVX-512 steps get f from one VREDUCEPS and 2^floor(x) from VSCALEFPS, which floors its
/// exponent itself): a fit of the relative error, 3e-6 in fp32 (Horner), far below the bf16
/// rounding of P (2^-9) and the lse tolerance. Degree 4, not 5: the exp2 is most of the softmax,
/// which is most of this forward. Shared by the AVX-512 and portable row steps so both compute
/// the same P.
inline constexpr float kExp2Poly[5] = {1.0f, 0.6930448412895203f, 0.2412802129983902f,
                                       0.052242446690797806f, 0.013426701538264751f};

/// S = Q K^T for query tiles x key tiles of one block.
struct AmxScoresArgs {
  const uint16_t* q = nullptr;  ///< [query_tiles * 16][dp]
  const uint32_t* k = nullptr;  ///< key_tiles K^T tiles
  int64_t query_tiles = 0;
  int64_t key_tiles = 0;
  int64_t dp = 0;
  float* s = nullptr;
  int64_t ld_s = 0;  ///< floats, at least key_tiles * 16
};

/// Online softmax of one block, row by row: P = exp2(S * scale2 - m) as bf16, running max and sum
/// updated, O rows rescaled where the max moved.
struct AmxSoftmaxArgs {
  const float* s = nullptr;
  int64_t ld_s = 0;
  uint16_t* p = nullptr;
  int64_t ld_p = 0;  ///< elements; P columns keys .. ld_p are zeroed
  int64_t rows = 0;  ///< query rows with data; rows .. lanes of P are zeroed
  int64_t lanes = 0;
  int64_t keys = 0;
  const int64_t* visible = nullptr;  ///< per row, keys of the block it may see; nullptr: all
  float scale2 = 0.0f;               ///< softmax scale * log2(e)
  float* row_max = nullptr;          ///< log2 units
  float* row_sum = nullptr;          ///< [lanes][kAmxSumLanes] partial sums
  float* o = nullptr;
  int64_t ld_o = 0;
  int64_t o_cols = 0;  ///< floats of an O row to rescale
};

/// O += P V for query tiles x head-dim tiles over key chunks of one block.
struct AmxValuesArgs {
  const uint16_t* p = nullptr;
  int64_t ld_p = 0;
  const uint32_t* v = nullptr;  ///< key_chunks V chunks
  int64_t query_tiles = 0;
  int64_t key_chunks = 0;
  int64_t d_tiles = 0;
  float* o = nullptr;
  int64_t ld_o = 0;
  /// false in a task's first key block: O starts from zeroed tiles, not from memory, which then
  /// needs no zeroing either (at D = 160 that is 20 tile loads and a 20 KiB memset a task).
  bool accumulate = true;
};

/// Normalizes O by the row sums and writes it as bf16 rows (and the log-sum-exp).
struct AmxFinishArgs {
  const float* o = nullptr;
  int64_t ld_o = 0;
  int64_t rows = 0;
  int64_t head_dim = 0;
  const float* row_max = nullptr;
  const float* row_sum = nullptr;  ///< [rows][kAmxSumLanes] partial sums
  uint16_t* out = nullptr;
  int64_t out_stride = 0;  ///< elements between rows
  float* lse = nullptr;    ///< nullptr: not asked for
  int64_t lse_stride = 0;
};

/// The AMX forward's steps of one implementation.
struct AmxKernels {
  const char* name = nullptr;
  /// Loads the tile configuration in the calling thread; before any other step of this table.
  void (*begin_thread)() = nullptr;
  /// Releases the tiles; after the thread's last step.
  void (*end_thread)() = nullptr;
  /// rows x head_dim bf16 (row stride in elements) into the [lanes][dp] Q block.
  void (*pack_queries)(const uint16_t* q, int64_t stride, int64_t rows, int64_t head_dim,
                       int64_t dp, int64_t lanes, uint16_t* dst) = nullptr;
  /// Up to 16 keys into one K^T tile (missing keys and dims zero).
  void (*pack_key_tile)(const uint16_t* k, int64_t stride, int64_t keys, int64_t head_dim,
                        int64_t dp, uint32_t* dst) = nullptr;
  /// Up to 32 keys into one V chunk (missing keys and dims zero).
  void (*pack_value_chunk)(const uint16_t* v, int64_t stride, int64_t keys, int64_t head_dim,
                           int64_t d_tiles, uint32_t* dst) = nullptr;
  void (*scores)(const AmxScoresArgs&) = nullptr;
  void (*softmax)(const AmxSoftmaxArgs&) = nullptr;
  void (*values)(const AmxValuesArgs&) = nullptr;
  void (*finish)(const AmxFinishArgs&) = nullptr;
};

#ifdef FLASHVISION_CPU_HAVE_AMX
/// The real tile instructions; call only where CPUID reports AMX-TILE, AMX-BF16, AVX-512 (F, BW,
/// VL, DQ) and AVX512_BF16 and the kernel granted this process the tile data state.
const AmxKernels& amx_native_kernels();
#endif
/// The same steps over an emulation of the tiles (any CPU).
const AmxKernels& amx_emulated_kernels();

}  // namespace flashvision::detail::cpu
