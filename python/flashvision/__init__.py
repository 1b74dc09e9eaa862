"""flashvision: exact, IO-aware (Flash) attention for image models.

Functions here take numpy arrays (float32, float16; CPU) or torch tensors (float32, float16,
bfloat16; CPU or CUDA) and allocate their outputs in the caller's framework. torch is imported only
when torch tensors are passed or ``flashvision.torch`` (or ``flashvision.integrations``) is first
used; ``import flashvision`` alone is enough to reach them.

>>> out = flashvision.attention(q, k, v)                 # q [B, N, H, D], k/v [B, Nk, Hkv, D]
>>> out = flashvision.attention(q, k, v, layout="bhsd")  # q [B, H, N, D] (PyTorch SDPA order)
>>> flashvision.selected_kernel(q, k, v, layout="bhsd")  # the kernel that call runs: "sm80", ...
>>> out = flashvision.attention_fp8(q8, k8, v8, descale_q=sq, descale_k=sk, descale_v=sv)
"""

from . import _C
from ._C import Error, compiled_backends, describe_devices, kernel_name
from ._frontend import (
    attention,
    attention_backward,
    attention_fp8,
    attention_varlen,
    attention_varlen_backward,
    selected_kernel,
)

__version__ = _C.__version__
# The git commit the extension was built from ("<sha>[-dirty]" or "unknown").
__build_commit__ = _C.__build_commit__

# Submodules that need torch or a model library: loaded on first access, so that `import
# flashvision` stays free of them and `flashvision.torch.scaled_dot_product_attention` works after
# it without a second import.
_LAZY_SUBMODULES = ("torch", "integrations")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'flashvision' has no attribute {name!r}")


__all__ = [
    "Error",
    "attention",
    "attention_backward",
    "attention_fp8",
    "attention_varlen",
    "attention_varlen_backward",
    "compiled_backends",
    "describe_devices",
    "kernel_name",
    "selected_kernel",
]
