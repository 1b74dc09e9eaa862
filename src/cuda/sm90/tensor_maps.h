// TMA descriptors (CUtensorMap) of the sm90 kernels, encoded on the host.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "flashvision/tensor.h"

namespace flashvision::detail::sm90 {

/// A [sequence][row][head][dim] operand: extents and element strides (dim is contiguous).
struct OperandGeometry {
  const void* data = nullptr;
  DType dtype = DType::bf16;
  int64_t head_dim = 0, rows = 0, heads = 0, seqs = 0;
  int64_t row_stride = 0, head_stride = 0, seq_stride = 0;
};

/// Why TMA cannot address `g` (a stride that is zero across several elements or not a multiple
/// of 16 bytes), or nullptr when it can.
const char* tensor_map_problem(const OperandGeometry& g);

/// A rank-4 tiled map of `g` with boxes of box_cols x box_rows (one head, one sequence) and the
/// given shared-memory swizzle (32, 64 or 128 bytes); out-of-range elements read as zero. Throws
/// flashvision::Error when the driver rejects it.
CUtensorMap make_tensor_map(const OperandGeometry& g, int box_cols, int box_rows,
                            int swizzle_bytes);

/// A rank-5 tiled map of the FP8 forward's transposed V (fp8_values.h: [seqs][heads][panels]
/// [head_dim][panel_keys], contiguous) whose boxes are one panel's box_rows rows of panel_keys
/// keys, with the swizzle of panel_keys bytes; rows past head_dim and panels past `panels` read
/// as zero. Throws flashvision::Error when the driver rejects it.
CUtensorMap make_fp8_values_map(const void* data, int64_t panel_keys, int64_t head_dim,
                                int64_t panels, int64_t heads, int64_t seqs, int box_rows);

/// A rank-3 tiled map of the backward's fp32 dQ accumulator, [head][row][dim] with dim contiguous
/// and no padding, with boxes of box_cols x box_rows of one head and the 64-byte swizzle (the
/// sm90 backward's dQ staging layout). Throws flashvision::Error when the driver rejects it.
CUtensorMap make_dq_accum_map(float* data, int64_t head_dim, int64_t rows, int64_t heads,
                              int box_cols, int box_rows);

}  // namespace flashvision::detail::sm90
