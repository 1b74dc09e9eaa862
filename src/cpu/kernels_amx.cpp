// The AMX forward's steps with the real tile instructions. This TU is compiled with the AVX-512
// flags plus -mavx512bf16 -mamx-tile -mamx-bf16; amx_forward.cpp reaches it only on CPUs that have
// all of them and after the kernel granted the tile data state (amx_features.cpp).
#include "cpu/amx_rows_avx512.h"  // must come first: it names this TU's namespace

#include "cpu/amx_body.h"
#include "cpu/amx_kernels.h"
#include "cpu/amx_tiles_native.h"

namespace flashvision::detail::cpu {

const AmxKernels& amx_native_kernels() {
  static constexpr AmxKernels kTable = isa_amx::make_amx_kernels<isa_amx::NativeTiles>("cpu-amx");
  return kTable;
}

}  // namespace flashvision::detail::cpu
