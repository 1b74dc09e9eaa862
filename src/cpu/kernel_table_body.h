// Assembles one ISA's KernelTable from the bodies written once for every ISA. A kernels_*.cpp
// includes its simd_*.h (which names the namespace FLASHVISION_CPU_ISA_NS) and then this header.
#pragma once

#ifndef FLASHVISION_CPU_ISA_NS
#error "include a cpu/simd_*.h header first"
#endif

#include "cpu/gemm_body.h"
#include "cpu/kernels.h"
#include "cpu/pack_body.h"
#include "cpu/softmax_body.h"

namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS {

/// The table of this ISA's kernels.
template <bool kNativeBf16>
constexpr KernelTable make_kernel_table(const char* name) {
  KernelTable table;
  table.name = name;
  table.gemm = &gemm;
  table.online_softmax = &online_softmax;
  table.softmax_grad = &softmax_grad;
  table.pack_rows = &pack_rows;
  table.pack_transposed = &pack_transposed;
  table.store_rows = &store_rows<kNativeBf16>;
  table.store_transposed = &store_transposed<kNativeBf16>;
  table.row_dot = &row_dot;
  return table;
}

}  // namespace flashvision::detail::cpu::FLASHVISION_CPU_ISA_NS
