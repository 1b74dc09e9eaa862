// The portable kernel table: plain C++ for the baseline ISA, right on any CPU.
#include "cpu/simd_portable.h"  // must come first: it names this TU's kernel namespace

#include "cpu/kernel_table_body.h"
#include "cpu/kernels.h"

namespace flashvision::detail::cpu {

const KernelTable& portable_kernel_table() {
  static constexpr KernelTable kTable = isa_portable::make_kernel_table<false>("cpu-portable");
  return kTable;
}

}  // namespace flashvision::detail::cpu
