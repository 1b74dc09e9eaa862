// Whether the AMX forward may run: CPUID, the register state the OS enables, Linux's permission
// for the tile data, and FLASHVISION_CPU_AMX (compiled for the baseline ISA).
#include "api/env_option.h"
#include "cpu/amx_forward.h"
#include "cpu/isa.h"

#if defined(FLASHVISION_CPU_HAVE_AMX) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define FLASHVISION_CPU_AMX_LINUX 1
#endif

namespace flashvision::detail::cpu {
namespace {

constexpr const char* kVariable = "FLASHVISION_CPU_AMX";

enum class AmxMode { automatic, off, forced };

AmxMode requested_mode() {
  constexpr auto value = [](AmxMode mode) { return static_cast<int>(mode); };
  return static_cast<AmxMode>(env_choice(
      kVariable,
      {{"auto", value(AmxMode::automatic)},
       {"0", value(AmxMode::off)},
       {"1", value(AmxMode::forced)}},
      value(AmxMode::automatic),
      "\"auto\" (AMX where the CPU has it, for bf16), \"0\" (never) or \"1\" (always for bf16, "
      "emulated on CPUs without AMX)"));
}

#ifdef FLASHVISION_CPU_AMX_LINUX
bool detect_native() {
  const CpuFeatures& f = cpu_features();
  if (!f.avx512 || !f.avx512_bf16 || !f.amx_bf16) return false;
  // Linux hands out the 8 KiB tile data state only on request, once per process.
  constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
  constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
  return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
}
#endif

}  // namespace

bool amx_native_available() {
#ifdef FLASHVISION_CPU_AMX_LINUX
  static const bool available = detect_native();
  return available;
#else
  return false;
#endif
}

const AmxKernels* amx_forward_kernels(const Problem& problem) {
  const AmxMode mode = requested_mode();
  if (mode == AmxMode::off || problem.dtype != DType::bf16) return nullptr;
  if (!amx_forward_fits(problem)) return nullptr;
  // A forced ISA (tests, benchmarks) names the kernels that run: not AMX unless asked for too.
  if (mode == AmxMode::automatic && env_text("FLASHVISION_CPU_ISA")) return nullptr;
#ifdef FLASHVISION_CPU_AMX_LINUX
  if (amx_native_available()) return &amx_native_kernels();
#endif
  return mode == AmxMode::forced ? &amx_emulated_kernels() : nullptr;
}

}  // namespace flashvision::detail::cpu
