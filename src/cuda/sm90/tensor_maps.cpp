// The driver's cuTensorMapEncodeTiled is reached through the runtime's entry-point query, so the
// library does not link libcuda itself.
#include "cuda/sm90/tensor_maps.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <string>

#include "flashvision/error.h"

namespace flashvision::detail::sm90 {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 load_encode_function() {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t status = cudaGetDriverEntryPointByVersion(
      "cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || function == nullptr) {
    throw Error("sm90: the CUDA driver does not provide cuTensorMapEncodeTiled (" +
                std::string(cudaGetErrorString(status)) + ")");
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
}

PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  static const PFN_cuTensorMapEncodeTiled_v12000 function = load_encode_function();
  return function;
}

CUtensorMapSwizzle swizzle_mode(int bytes) {
  switch (bytes) {
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    default: throw Error("sm90: no TMA swizzle of " + std::to_string(bytes) + " bytes");
  }
}

/// Byte stride of a dimension for the map. A dimension of extent 1 is never stepped along, but
/// the driver still wants a non-zero multiple of 16, so it gets the distance past the last element.
uint64_t map_stride(int64_t extent, int64_t stride_elems, int64_t element_bytes,
                    uint64_t past_end) {
  return extent == 1 ? past_end : static_cast<uint64_t>(stride_elems * element_bytes);
}

CUtensorMapDataType map_data_type(DType dtype) {
  switch (dtype) {
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::f8e4m3: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    default: throw Error(std::string("sm90: no tensor map of ") + to_string(dtype) + " operands");
  }
}

}  // namespace

const char* tensor_map_problem(const OperandGeometry& g) {
  const int64_t extents[3] = {g.rows, g.heads, g.seqs};
  const int64_t strides[3] = {g.row_stride, g.head_stride, g.seq_stride};
  for (int i = 0; i < 3; ++i) {
    if (extents[i] > 1 && strides[i] <= 0) return "a broadcast (zero) or negative stride";
    if (extents[i] > 1 && (strides[i] * static_cast<int64_t>(element_size(g.dtype))) % 16 != 0) {
      return "a stride that is not 16-byte aligned";
    }
  }
  return nullptr;
}

CUtensorMap make_tensor_map(const OperandGeometry& g, int box_cols, int box_rows,
                            int swizzle_bytes) {
  const uint64_t last = static_cast<uint64_t>((g.rows - 1) * g.row_stride +
                                              (g.heads - 1) * g.head_stride +
                                              (g.seqs - 1) * g.seq_stride + g.head_dim);
  const auto element_bytes = static_cast<int64_t>(element_size(g.dtype));
  const uint64_t past_end = (last * element_bytes + 15) / 16 * 16;
  cuuint64_t dims[4] = {static_cast<cuuint64_t>(g.head_dim), static_cast<cuuint64_t>(g.rows),
                        static_cast<cuuint64_t>(g.heads), static_cast<cuuint64_t>(g.seqs)};
  cuuint64_t strides[3] = {map_stride(g.rows, g.row_stride, element_bytes, past_end),
                           map_stride(g.heads, g.head_stride, element_bytes, past_end),
                           map_stride(g.seqs, g.seq_stride, element_bytes, past_end)};
  cuuint32_t box[4] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows), 1, 1};
  cuuint32_t element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult result = encode_function()(
      &map, map_data_type(g.dtype), 4, const_cast<void*>(g.data), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle_bytes),
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error("sm90: cuTensorMapEncodeTiled rejected a tensor map (CUresult " +
                std::to_string(static_cast<int>(result)) + ", dims " + std::to_string(g.head_dim) +
                "x" + std::to_string(g.rows) + "x" + std::to_string(g.heads) + "x" +
                std::to_string(g.seqs) + ")");
  }
  return map;
}

CUtensorMap make_fp8_values_map(const void* data, int64_t panel_keys, int64_t head_dim,
                                int64_t panels, int64_t heads, int64_t seqs, int box_rows) {
  cuuint64_t dims[5] = {static_cast<cuuint64_t>(panel_keys), static_cast<cuuint64_t>(head_dim),
                        static_cast<cuuint64_t>(panels), static_cast<cuuint64_t>(heads),
                        static_cast<cuuint64_t>(seqs)};
  // Bytes, as elements are: panel_keys is 32, 64 or 128, so every stride is a multiple of 16.
  cuuint64_t strides[4] = {static_cast<cuuint64_t>(panel_keys)};
  for (int i = 1; i < 4; ++i) strides[i] = strides[i - 1] * dims[i];
  cuuint32_t box[5] = {static_cast<cuuint32_t>(panel_keys), static_cast<cuuint32_t>(box_rows), 1, 1,
                       1};
  cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult result = encode_function()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 5, const_cast<void*>(data), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(static_cast<int>(panel_keys)),
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error("sm90: cuTensorMapEncodeTiled rejected the FP8 forward's V map (CUresult " +
                std::to_string(static_cast<int>(result)) + ", panels of " +
                std::to_string(panel_keys) + " keys, " + std::to_string(panels) + " panels)");
  }
  return map;
}

CUtensorMap make_dq_accum_map(float* data, int64_t head_dim, int64_t rows, int64_t heads,
                              int box_cols, int box_rows) {
  const uint64_t row_bytes = static_cast<uint64_t>(head_dim) * sizeof(float);
  cuuint64_t dims[3] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(rows),
                        static_cast<cuuint64_t>(heads)};
  // Rows of head_dim floats (a multiple of 8): every stride a multiple of 32 bytes, as TMA wants 16.
  cuuint64_t strides[2] = {row_bytes, static_cast<cuuint64_t>(rows) * row_bytes};
  cuuint32_t box[3] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows), 1};
  cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map{};
  const CUresult result = encode_function()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, data, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error("sm90: cuTensorMapEncodeTiled rejected the dQ accumulator's map (CUresult " +
                std::to_string(static_cast<int>(result)) + ", dims " + std::to_string(head_dim) +
                "x" + std::to_string(rows) + "x" + std::to_string(heads) + ")");
  }
  return map;
}

}  // namespace flashvision::detail::sm90
