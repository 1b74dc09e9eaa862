"""Per-tensor FP8 quantization for flashvision.attention_fp8."""

import math

import torch

from .. import _checks as checks

E4M3_MAX = 448.0  # float8_e4m3fn's largest finite value


def quantize_fp8(x):
    """(x8, descale): floating-point tensor x as float8_e4m3fn, scaled so that its largest
    magnitude becomes e4m3's 448, and the factor x8 stands for x by (x ~ x8 * descale), for
    attention_fp8's descale_q/k/v. The descale is a Python float read back from x's device: one
    synchronization a call (an all-zero x gets 1.0). ValueError for a tensor with NaN or inf."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {checks.type_name(x)}")
    if not x.is_floating_point():
        raise TypeError(f"x.dtype is {x.dtype}; expected a floating-point tensor")
    amax = x.detach().abs().max().item() if x.numel() else 0.0
    if not math.isfinite(amax):
        raise ValueError(f"x holds {amax}; expected finite values (e4m3 has no infinity)")
    descale = amax / E4M3_MAX if amax > 0.0 else 1.0
    return (x.detach() / descale).to(torch.float8_e4m3fn), descale
