// Which SIMD kernels this CPU can run, and which ones a call uses.
#pragma once

#include <string>

#include "cpu/kernels.h"

namespace flashvision::detail::cpu {

/// SIMD features of this CPU that the operating system has enabled.
struct CpuFeatures {
  bool avx2 = false;         ///< AVX2 + FMA + F16C with YMM state enabled
  bool avx512 = false;       ///< AVX-512 F + BW + VL + DQ with ZMM state enabled
  bool avx512_bf16 = false;  ///< AVX512_BF16 (only meaningful with avx512)
  /// AMX-TILE and AMX-BF16 with the tile state enabled in XCR0 (Linux still has to grant the tile
  /// data to the process: amx_features.cpp)
  bool amx_bf16 = false;
  std::string model;  ///< CPUID brand string ("unknown CPU" when unavailable)
};

/// The features of this CPU, read once.
const CpuFeatures& cpu_features();

/// The kernels a call runs: the ones FLASHVISION_CPU_ISA names (portable, avx2 or avx512; throws
/// flashvision::Error when this CPU or build lacks them), else the best this CPU supports.
/// The variable is read on every call so tests can switch paths.
const KernelTable& select_kernels();

}  // namespace flashvision::detail::cpu
