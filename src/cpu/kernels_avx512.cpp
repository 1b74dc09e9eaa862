// The AVX-512 kernel tables. This TU is compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq
// (and the AVX2 flags); cpu_features.cpp calls avx512_kernel_table() only on CPUs that have all
// four, and asks for the AVX512_BF16 conversions only when CPUID reports them too.
#include "cpu/simd_avx512.h"  // must come first: it names this TU's kernel namespace

#include "cpu/kernel_table_body.h"
#include "cpu/kernels.h"

namespace flashvision::detail::cpu {

const KernelTable& avx512_kernel_table(bool native_bf16) {
  static constexpr KernelTable kWithBf16 = isa_avx512::make_kernel_table<true>("cpu-avx512");
  static constexpr KernelTable kWithoutBf16 = isa_avx512::make_kernel_table<false>("cpu-avx512");
  return native_bf16 ? kWithBf16 : kWithoutBf16;
}

}  // namespace flashvision::detail::cpu
