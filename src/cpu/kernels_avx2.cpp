// The AVX2 kernel table. This TU is compiled with -mavx2 -mfma -mf16c; cpu_features.cpp calls
// avx2_kernel_table() only on CPUs (and operating systems) that support those.
#include "cpu/simd_avx2.h"  // must come first: it names this TU's kernel namespace

#include "cpu/kernel_table_body.h"
#include "cpu/kernels.h"

namespace flashvision::detail::cpu {

const KernelTable& avx2_kernel_table() {
  static constexpr KernelTable kTable = isa_avx2::make_kernel_table<false>("cpu-avx2");
  return kTable;
}

}  // namespace flashvision::detail::cpu
