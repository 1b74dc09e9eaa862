// Whether the sm80 backward's last-wave split kernel starts as a programmatic dependent launch.
#pragma once

namespace flashvision::detail::sm80 {

/// What FLASHVISION_SM80_BWD_TAIL_PDL asks: unset, "" or "1": start the split kernel's CTAs on
/// the SMs the unsplit kernel frees; "0": only after the unsplit kernel ends. Throws
/// flashvision::Error naming the variable on any other value.
bool bwd_tail_pdl_requested();

/// Whether the split kernel of a last-wave split launches as a programmatic dependent of the
/// unsplit kernel on the current device: FLASHVISION_SM80_BWD_TAIL_PDL allows it and the device
/// has compute capability 9.0 or more (griddepcontrol).
bool bwd_tail_pdl_enabled();

}  // namespace flashvision::detail::sm80
