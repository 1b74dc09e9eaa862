// CPUID feature detection and the choice of micro-kernels (compiled for the baseline ISA).
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "api/env_option.h"
#include "cpu/cpu_backend.h"
#include "cpu/isa.h"
#include "cpu/kernels.h"
#include "flashvision/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define FLASHVISION_CPU_X86 1
#endif

namespace flashvision::detail {
namespace cpu {
namespace {

#ifdef FLASHVISION_CPU_X86
bool bit(uint32_t word, int index) { return ((word >> index) & 1u) != 0; }

/// XCR0: which register states the operating system saves, i.e. may be used.
uint64_t enabled_register_state() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

std::string brand_string() {
  // The cast: GCC declares __get_cpuid_max unsigned, clang int.
  if (static_cast<uint32_t>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000004u)
    return "unknown CPU";
  uint32_t words[12] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    __get_cpuid(0x80000002u + i, &words[4 * i], &words[4 * i + 1], &words[4 * i + 2],
                &words[4 * i + 3]);
  }
  char text[sizeof(words) + 1] = {};
  std::memcpy(text, words, sizeof(words));
  std::string model(text);
  const auto first = model.find_first_not_of(' ');
  const auto last = model.find_last_not_of(' ');
  return first == std::string::npos ? "unknown CPU" : model.substr(first, last - first + 1);
}

CpuFeatures detect() {
  CpuFeatures f;
  f.model = brand_string();
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (static_cast<uint32_t>(__get_cpuid_max(0, nullptr)) < 7u ||
      !__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return f;
  const bool fma = bit(ecx, 12), osxsave = bit(ecx, 27), avx = bit(ecx, 28), f16c = bit(ecx, 29);
  const uint64_t xcr0 = osxsave ? enabled_register_state() : 0;
  const bool ymm_enabled = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm_enabled = (xcr0 & 0xe6u) == 0xe6u;  // plus opmask and both ZMM halves
  __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
  const uint32_t leaf7_max_subleaf = eax;
  const bool avx2 = bit(ebx, 5), avx512f = bit(ebx, 16), avx512dq = bit(ebx, 17);
  const bool avx512bw = bit(ebx, 30), avx512vl = bit(ebx, 31);
  const bool amx_bf16 = bit(edx, 22), amx_tile = bit(edx, 24);
  const bool tiles_enabled = (xcr0 & 0x60000u) == 0x60000u;  // XTILECFG and XTILEDATA
  f.avx2 = ymm_enabled && avx && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmm_enabled && avx512f && avx512bw && avx512vl && avx512dq;
  f.amx_bf16 = tiles_enabled && amx_bf16 && amx_tile;
  if (f.avx512 && leaf7_max_subleaf >= 1) {
    __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx);
    f.avx512_bf16 = bit(eax, 5);
  }
  return f;
}
#else
CpuFeatures detect() {
  CpuFeatures f;
  f.model = "non-x86 CPU";
  return f;
}
#endif

const KernelTable& best_kernels(const CpuFeatures& f) {
#ifdef FLASHVISION_CPU_HAVE_AVX512
  if (f.avx512) return avx512_kernel_table(f.avx512_bf16);
#endif
#ifdef FLASHVISION_CPU_HAVE_AVX2
  if (f.avx2) return avx2_kernel_table();
#endif
  (void)f;
  return portable_kernel_table();
}

/// The values FLASHVISION_CPU_ISA may take on this CPU with this build.
std::string available_sets(const CpuFeatures& f) {
  std::string sets = "portable";
#ifdef FLASHVISION_CPU_HAVE_AVX2
  if (f.avx2) sets += ", avx2";
#endif
#ifdef FLASHVISION_CPU_HAVE_AVX512
  if (f.avx512) sets += ", avx512";
#endif
  (void)f;
  return sets;
}

[[noreturn]] void refuse(const std::string& requested, const std::string& why,
                         const CpuFeatures& f) {
  throw Error("FLASHVISION_CPU_ISA is '" + requested + "' but " + why + "; expected one of " +
              available_sets(f) + " (or unset for the best)");
}

const KernelTable& requested_kernels(const std::string& requested, const CpuFeatures& f) {
  if (requested == "portable") return portable_kernel_table();
  if (requested == "avx2") {
#ifdef FLASHVISION_CPU_HAVE_AVX2
    if (!f.avx2) refuse(requested, "this CPU lacks AVX2, FMA or F16C", f);
    return avx2_kernel_table();
#else
    refuse(requested, "this build has no AVX2 kernels", f);
#endif
  }
  if (requested == "avx512") {
#ifdef FLASHVISION_CPU_HAVE_AVX512
    if (!f.avx512) refuse(requested, "this CPU lacks AVX-512 F, BW, VL or DQ", f);
    return avx512_kernel_table(f.avx512_bf16);
#else
    refuse(requested, "this build has no AVX-512 kernels", f);
#endif
  }
  refuse(requested, "that is not a known kernel set", f);
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

const KernelTable& select_kernels() {
  const std::optional<std::string> requested = env_text("FLASHVISION_CPU_ISA");
  if (!requested) return best_kernels(cpu_features());
  return requested_kernels(*requested, cpu_features());
}

}  // namespace cpu

std::string cpu_kernel_name() { return cpu::select_kernels().name; }

std::string cpu_description() {
  const cpu::CpuFeatures& f = cpu::cpu_features();
  std::string simd;
  if (f.avx2) simd += " avx2 fma f16c";
  if (f.avx512) simd += " avx512f avx512bw avx512vl avx512dq";
  if (f.avx512_bf16) simd += " avx512_bf16";
  if (simd.empty()) simd = " none used";
  std::string kernels;
  try {
    kernels = cpu_kernel_name();
  } catch (const Error& e) {  // a description must not fail because of a bad override
    kernels = std::string("none (") + e.what() + ")";
  }
  return "cpu: " + f.model + ", " + std::to_string(omp_get_max_threads()) +
         " OpenMP threads, SIMD:" + simd + ", kernels " + kernels;
}

}  // namespace flashvision::detail
