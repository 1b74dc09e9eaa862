"""The implementations under test, as forward callables on [B, H, N, D] tensors."""

import torch
import torch.nn.functional as F

CUDA_IMPLS = ("flashvision", "sdpa-cudnn", "sdpa-flash", "sdpa-efficient", "sdpa-math", "naive")
CPU_IMPLS = ("flashvision", "torch-cpu-sdpa", "naive")
ALL_IMPLS = CUDA_IMPLS + ("torch-cpu-sdpa",)

# impl -> torch.nn.attention.SDPBackend member (looked up by name: older torch lacks some).
SDPA_BACKENDS = {
    "sdpa-math": "MATH",
    "sdpa-flash": "FLASH_ATTENTION",
    "sdpa-efficient": "EFFICIENT_ATTENTION",
    "sdpa-cudnn": "CUDNN_ATTENTION",
}

# These form the whole B x H x Nq x Nk score matrix, so they are capped by --naive-cap-gb.
QUADRATIC_IMPLS = ("naive", "sdpa-math")


def impls_for(device):
    """Every implementation that runs on `device`, in table order."""
    return CUDA_IMPLS if device == "cuda" else CPU_IMPLS


def scores_bytes(case, impl, dtype):
    """Bytes of one B x H x Nq x Nk score matrix as `impl` stores it.

    SDPA's math backend upcasts half and bfloat16 to float32 for its softmax (unless
    allow_fp16_bf16_reduction_math_sdp is set), so its buffer is 4 bytes per score.
    """
    elem = torch.empty((), dtype=dtype).element_size()
    if impl == "sdpa-math":
        elem = max(elem, 4)
    return case.B * case.H * case.Nq * case.Nk * elem


def naive(q, k, v, scale):
    """softmax(q k^T * scale) v with the full score matrix in memory (the baseline)."""
    return torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v


def forward_fn(impl, scale):
    """A callable (q, k, v) -> out for `impl`; raises RuntimeError when `impl` is missing."""
    if impl == "flashvision":
        from flashvision.torch import scaled_dot_product_attention

        return lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=scale)
    if impl == "naive":
        return lambda q, k, v: naive(q, k, v, scale)
    if impl == "torch-cpu-sdpa":
        # On CPU tensors PyTorch picks its own CPU flash-attention kernel.
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=scale)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, SDPA_BACKENDS[impl], None)
    if backend is None:
        raise RuntimeError(f"torch {torch.__version__} has no SDPBackend.{SDPA_BACKENDS[impl]}")

    def sdpa(q, k, v):
        # Only the forward needs the context: autograd replays the backward of the kernel the
        # forward chose.
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, scale=scale)

    return sdpa


def flashvision_kernel(inputs, backward=False):
    """The kernel flashvision runs on an input set ("cpu-avx2", "sm80", "sm90", ...), as the
    library's own dispatch picks it, for the forward or the backward; None when flashvision
    rejects the problem (its record then says why)."""
    import flashvision

    try:
        return flashvision.selected_kernel(inputs.q, inputs.k, inputs.v, layout="bhsd",
                                           backward=backward)
    except flashvision.Error:
        return None


def pass_kernel(forward_kernel, backward_kernel, pass_):
    """The kernel a record of `pass_` names: the forward's, or for fwd+bwd "forward/backward"
    (as the CLI's records do, e.g. "sm90/sm80"); None where either is unknown."""
    if pass_ == "fwd" or forward_kernel is None:
        return forward_kernel
    return None if backward_kernel is None else f"{forward_kernel}/{backward_kernel}"
