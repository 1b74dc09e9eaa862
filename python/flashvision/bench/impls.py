"""The implementations under test, as forward callables on [B, H, N, D] tensors."""

import torch
import torch.nn.functional as F

CUDA_IMPLS = ("flashvision", "sdpa-cudnn", "sdpa-flash", "sdpa-efficient", "sdpa-math", "naive")
CPU_IMPLS = ("flashvision", "torch-cpu-sdpa", "naive")
# Run only when asked for (--impl): flashvision's FP8 forward on the case's inputs quantized to
# float8_e4m3fn per tensor (on a Hopper GPU; forward only), another precision than the peers'.
CUDA_OPT_IN_IMPLS = ("flashvision-fp8",)
ALL_IMPLS = CUDA_IMPLS + CUDA_OPT_IN_IMPLS + ("torch-cpu-sdpa",)

# impl -> torch.nn.attention.SDPBackend member (looked up by name: older torch lacks some).
SDPA_BACKENDS = {
    "sdpa-math": "MATH",
    "sdpa-flash": "FLASH_ATTENTION",
    "sdpa-efficient": "EFFICIENT_ATTENTION",
    "sdpa-cudnn": "CUDNN_ATTENTION",
}

# These form the whole B x H x Nq x Nk score matrix, so they are capped by --naive-cap-gb.
QUADRATIC_IMPLS = ("naive", "sdpa-math")


def impls_for(device, opt_in=False):
    """The implementations that run on `device` by default (with opt_in, also those run only
    when asked for), in table order."""
    if device != "cuda":
        return CPU_IMPLS
    return CUDA_IMPLS[:1] + CUDA_OPT_IN_IMPLS + CUDA_IMPLS[1:] if opt_in else CUDA_IMPLS


def _fp8_forward(scale, sets):
    """flashvision.attention_fp8 on [B, H, N, D] tensors. Each input set of `sets` is quantized
    here, before any call is timed or captured in a graph (quantizing reads each tensor's amax
    back to the host, which a capture cannot do); a set met later is quantized on its first
    call."""
    import flashvision
    from flashvision.torch import quantize_fp8

    quantized = {}

    def quantize(q, k, v):
        key = (id(q), id(k), id(v))
        if key not in quantized:
            quantized[key] = [quantize_fp8(x) for x in (q, k, v)]
        return quantized[key]

    for s in sets:
        quantize(s.q, s.k, s.v)

    def fp8(q, k, v):
        (q8, sq), (k8, sk), (v8, sv) = quantize(q, k, v)
        return flashvision.attention_fp8(q8, k8, v8, descale_q=sq, descale_k=sk, descale_v=sv,
                                         scale=scale, layout="bhsd")

    return fp8


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


def forward_fn(impl, scale, sets=()):
    """A callable (q, k, v) -> out for `impl`; raises RuntimeError when `impl` is missing.
    `sets` are the input sets (with q, k, v) it will be called on, for rows that convert them
    ahead of the timings (flashvision-fp8)."""
    if impl == "flashvision":
        from flashvision.torch import scaled_dot_product_attention

        return lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=scale)
    if impl == "flashvision-fp8":
        return _fp8_forward(scale, sets)
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
