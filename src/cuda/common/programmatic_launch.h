// Whether kernels on the current device may launch as programmatic dependents (PTX griddepcontrol,
// cudaLaunchAttributeProgrammaticStreamSerialization): compute capability 9.0 and up.
#pragma once

namespace flashvision::detail {

/// Whether the current device runs griddepcontrol, so that a kernel launched with the
/// programmatic stream serialization attribute may start before the kernel ahead of it ends.
/// Throws flashvision::Error when CUDA cannot say.
bool programmatic_launch_supported();

}  // namespace flashvision::detail
