// The AMX forward's steps over emulated tiles, compiled for the baseline ISA: FLASHVISION_CPU_AMX=1
// runs the whole AMX path this way on CPUs without AMX, which is how the tests check its packing,
// tiling and softmax on any machine.
#include "cpu/amx_rows_portable.h"  // must come first: it names this TU's namespace

#include "cpu/amx_body.h"
#include "cpu/amx_kernels.h"
#include "cpu/amx_tiles_emulated.h"

namespace flashvision::detail::cpu {

const AmxKernels& amx_emulated_kernels() {
  static constexpr AmxKernels kTable =
      isa_amx_emulated::make_amx_kernels<isa_amx_emulated::EmulatedTiles>("cpu-amx-emulated");
  return kTable;
}

}  // namespace flashvision::detail::cpu
