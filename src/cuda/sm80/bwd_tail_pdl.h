// Whether the sm80 backward's last-wave split kernel starts as a programmatic dependent launch.
#pragma once

namespace flashvision::detail::sm80 {

/// What FLASHVISION_SM80_BWD_TAIL_PDL asks: unset, "" or "1": start the split kernel's CTAs on
/// the SMs the unsplit kernel frees; "0": only after the unsplit kernel ends. Throws
/// flashvision::Error naming the variable on any other value. The backend sets
/// BwdParams::tail_early from it and the device.
bool bwd_tail_pdl_requested();

}  // namespace flashvision::detail::sm80
