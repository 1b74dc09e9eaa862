"""PyTorch API of flashvision (importing it imports torch).

- ``scaled_dot_product_attention``: torch.nn.functional.scaled_dot_product_attention's signature
  and [B, H, N, D] layout.
- ``flash_attn_func`` / ``flash_attn_varlen_func``: flash-attn's signatures, [B, N, H, D] layout.
- ``SelfAttention`` / ``CrossAttention``: ready-made layers.
- ``quantize_fp8``: per-tensor float8_e4m3fn quantization for ``flashvision.attention_fp8``.
- The ops ``torch.ops.flashvision.fwd`` and ``torch.ops.flashvision.bwd`` underneath, with fake
  kernels and an autograd formula: everything here is differentiable and works under
  ``torch.compile(fullgraph=True)``. One build serves every torch version: nothing here is
  compiled against torch (tensors cross as data_ptr, shape and strides; eager calls skip the
  ops' dispatch where nothing would see the difference).
"""

from . import _ops  # noqa: F401  (registers torch.ops.flashvision.fwd / bwd)
from ._fp8 import quantize_fp8
from ._functional import flash_attn_func, flash_attn_varlen_func, scaled_dot_product_attention
from ._modules import CrossAttention, SelfAttention

__all__ = [
    "CrossAttention",
    "SelfAttention",
    "flash_attn_func",
    "flash_attn_varlen_func",
    "quantize_fp8",
    "scaled_dot_product_attention",
]
