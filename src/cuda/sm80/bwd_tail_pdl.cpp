#include "cuda/sm80/bwd_tail_pdl.h"

#include "api/env_option.h"

namespace flashvision::detail::sm80 {

bool bwd_tail_pdl_requested() {
  const int early = env_choice("FLASHVISION_SM80_BWD_TAIL_PDL", {{"1", 1}, {"0", 0}}, 1,
                               "1 (the split kernel starts as SMs free up) or 0 (after the unsplit "
                               "kernel)");
  return early == 1;
}

}  // namespace flashvision::detail::sm80
