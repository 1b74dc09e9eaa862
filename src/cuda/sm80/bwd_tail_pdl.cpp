#include "cuda/sm80/bwd_tail_pdl.h"

#include "api/env_option.h"
#include "cuda/common/programmatic_launch.h"

namespace flashvision::detail::sm80 {

bool bwd_tail_pdl_requested() {
  const int early = env_choice("FLASHVISION_SM80_BWD_TAIL_PDL", {{"1", 1}, {"0", 0}}, 1,
                               "1 (the split kernel starts as SMs free up) or 0 (after the unsplit "
                               "kernel)");
  return early == 1;
}

bool bwd_tail_pdl_enabled() { return bwd_tail_pdl_requested() && programmatic_launch_supported(); }

}  // namespace flashvision::detail::sm80
