"""flashvision.attention and friends: one entry point for numpy arrays and torch tensors.

numpy arrays go straight to the C++ core; torch tensors go through the flashvision::fwd / bwd
custom ops (flashvision.torch), so the result takes part in autograd and torch.compile.
Layout "bhsd" is handled by passing transposed views: no array is copied.
selected_kernel says which kernel a call would run, without running it.
"""

from . import _C
from . import _checks as checks


def _to_bshd(x, layout):
    """A [B, N, H, D] view of a tensor stored in `layout`."""
    return x if layout == "bshd" else x.swapaxes(1, 2)


def _empty_like(x):
    """A numpy output with x's shape, dtype and axis order (tests swap in a poisoned version)."""
    import numpy as np

    return np.empty_like(x)


def _empty(shape, dtype):
    """A numpy output of the given shape and dtype."""
    import numpy as np

    return np.empty(shape, dtype=dtype)


def _dense_q(q, layout):
    layout = checks.check_layout(layout)
    order = "[B, N, H, D]" if layout == "bshd" else "[B, H, N, D]"
    checks.check_rank("q", q, 4, f"4 ({order} for layout {layout!r})")
    return layout


def _forward_numpy(q, k, v, lse_shape, return_lse, **options):
    import numpy as np

    out = _empty_like(q)
    lse = _empty(lse_shape, np.float32) if return_lse else None
    _C.forward(q, k, v, out, lse, **options)
    return out, lse


def _backward_numpy(dout, q, k, v, out, lse, **options):
    dq, dk, dv = _empty_like(q), _empty_like(k), _empty_like(v)
    _C.backward(dout, q, k, v, out, lse, dq, dk, dv, **options)
    return dq, dk, dv


def attention(q, k, v, *, scale=None, causal=False, layout="bshd", return_lse=False):
    """Exact attention softmax(q k^T * scale) v.

    Args:
        q: queries [B, Nq, H, D] (layout "bshd") or [B, H, Nq, D] (layout "bhsd").
        k, v: keys and values [B, Nk, Hkv, D] (or [B, Hkv, Nk, D]); H must be a multiple of Hkv
            (grouped-query attention).
        scale: multiplier of q k^T; None means 1/sqrt(D).
        causal: mask aligned to the bottom-right corner (as flash-attn): query i sees key j when
            j <= i + Nk - Nq; rows that see no key output 0.
        layout: "bshd" or "bhsd", for q, k, v and the output alike.
        return_lse: also return the float32 log-sum-exp [B, H, Nq] (what the backward needs).

    Returns:
        out shaped like q (and lse), as numpy arrays or torch tensors like the inputs. With torch
        tensors the output is differentiable (the lse is not).
    """
    framework = checks.common_framework(("q", q), ("k", k), ("v", v))
    layout = _dense_q(q, layout)
    scale = checks.check_scale(scale)
    causal = checks.check_bool("causal", causal)
    checks.check_bool("return_lse", return_lse)
    q, k, v = (_to_bshd(x, layout) for x in (q, k, v))
    if framework == "torch":
        from .torch import _functional

        out, lse = _functional.forward(q, k, v, scale=scale, causal=causal, need_lse=return_lse)
    else:
        b, n, h, _ = q.shape
        out, lse = _forward_numpy(q, k, v, (b, h, n), return_lse, scale=scale, causal=causal)
    out = _to_bshd(out, layout)
    return (out, lse) if return_lse else out


def attention_fp8(q, k, v, *, descale_q=1.0, descale_k=1.0, descale_v=1.0, scale=None,
                  causal=False, layout="bshd", return_lse=False):
    """Exact attention of FP8 (float8_e4m3fn) torch tensors, forward only: on a Hopper GPU, or
    on the CPU (decoded to float32 there: a reference, not a fast path).

    Each tensor stands for its stored values times its descale factor (per-tensor scaling, as
    flashvision.torch.quantize_fp8 makes: x8 = (x / s).to(torch.float8_e4m3fn) with descale s,
    s = max|x| / 448), so the call computes
    softmax(q k^T * descale_q * descale_k * scale) v * descale_v. On the GPU the scores and the
    output's sums are float32 and the probabilities are rounded to e4m3 for the second GEMM
    (expect errors of a few percent of the output's largest value, against about 1 % in bf16);
    the CPU rounds only the output.

    Args:
        q, k, v: float8_e4m3fn tensors as for attention() (dense; on CUDA head dims that are
            multiples of 16 up to 256 and rows 16-byte aligned).
        descale_q, descale_k, descale_v: positive finite floats.
        scale, causal, layout, return_lse: as for attention() (scale >= 0).

    Returns:
        out shaped like q in bfloat16 (and the float32 lse, of the real scores). Not
        differentiable.
    """
    framework = checks.common_framework(("q", q), ("k", k), ("v", v))
    if framework != "torch":
        raise TypeError(f"attention_fp8 takes torch float8_e4m3fn tensors, got {framework} "
                        "arrays (numpy has no float8 dtype)")
    layout = _dense_q(q, layout)
    scale = checks.check_scale(scale)
    causal = checks.check_bool("causal", causal)
    checks.check_bool("return_lse", return_lse)
    descales = tuple(checks.check_descale(name, value) for name, value in
                     (("descale_q", descale_q), ("descale_k", descale_k),
                      ("descale_v", descale_v)))
    from .torch import _ops

    out, lse = _ops.forward_fp8(q, k, v, scale, causal, descales, need_lse=return_lse,
                                heads_first=layout == "bhsd")
    return (out, lse) if return_lse else out


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None, max_seqlen_k=None,
                     *, scale=None, causal=False, return_lse=False):
    """Attention over packed sequences of different lengths (no padding).

    Args:
        q: queries [total_q, H, D]; sequence b owns rows cu_seqlens_q[b] .. cu_seqlens_q[b+1].
        k, v: keys and values [total_k, Hkv, D], split by cu_seqlens_k.
        cu_seqlens_q, cu_seqlens_k: int32 [B + 1] offsets, from 0 to total, on q's device.
        max_seqlen_q, max_seqlen_k: the longest sequences; None (0) lets the library compute them
            for CPU arrays; required for CUDA tensors.
        scale, causal: as in attention() (the causal mask is per sequence).
        return_lse: also return the float32 log-sum-exp [H, total_q].
    """
    framework = checks.common_framework(
        ("q", q), ("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
        ("cu_seqlens_k", cu_seqlens_k))
    checks.check_rank("q", q, 3, "3 ([total_q, H, D])")
    options = dict(
        scale=checks.check_scale(scale),
        causal=checks.check_bool("causal", causal),
        max_seqlen_q=checks.check_max_seqlen("max_seqlen_q", max_seqlen_q),
        max_seqlen_k=checks.check_max_seqlen("max_seqlen_k", max_seqlen_k),
    )
    checks.check_bool("return_lse", return_lse)
    if framework == "torch":
        from .torch import _functional

        out, lse = _functional.forward(q, k, v, cu_seqlens_q=cu_seqlens_q,
                                       cu_seqlens_k=cu_seqlens_k, need_lse=return_lse, **options)
    else:
        total_q, h, _ = q.shape
        out, lse = _forward_numpy(q, k, v, (h, total_q), return_lse, cu_seqlens_q=cu_seqlens_q,
                                  cu_seqlens_k=cu_seqlens_k, **options)
    return (out, lse) if return_lse else out


def attention_backward(dout, q, k, v, out, lse, *, scale=None, causal=False, layout="bshd",
                       deterministic=False):
    """Gradients (dq, dk, dv) of attention() given dout, the gradient of the loss w.r.t. out.

    q, k, v, scale, causal and layout are those of the forward call; out and lse are what it
    returned (call it with return_lse=True). dk and dv are summed over each GQA group.
    """
    framework = checks.common_framework(
        ("dout", dout), ("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse))
    layout = _dense_q(q, layout)
    options = dict(
        scale=checks.check_scale(scale),
        causal=checks.check_bool("causal", causal),
        deterministic=checks.check_bool("deterministic", deterministic),
    )
    dout, q, k, v, out = (_to_bshd(x, layout) for x in (dout, q, k, v, out))
    if framework == "torch":
        from .torch import _functional

        grads = _functional.backward(dout, q, k, v, out, lse, **options)
    else:
        grads = _backward_numpy(dout, q, k, v, out, lse, **options)
    return tuple(_to_bshd(g, layout) for g in grads)


def attention_varlen_backward(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k,
                              max_seqlen_q=None, max_seqlen_k=None, *, scale=None, causal=False,
                              deterministic=False):
    """Gradients (dq, dk, dv) of attention_varlen(); arguments as there and in
    attention_backward()."""
    framework = checks.common_framework(
        ("dout", dout), ("q", q), ("k", k), ("v", v), ("out", out), ("lse", lse),
        ("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k))
    options = dict(
        scale=checks.check_scale(scale),
        causal=checks.check_bool("causal", causal),
        cu_seqlens_q=cu_seqlens_q,
        cu_seqlens_k=cu_seqlens_k,
        max_seqlen_q=checks.check_max_seqlen("max_seqlen_q", max_seqlen_q),
        max_seqlen_k=checks.check_max_seqlen("max_seqlen_k", max_seqlen_k),
        deterministic=checks.check_bool("deterministic", deterministic),
    )
    if framework == "torch":
        from .torch import _functional

        return _functional.backward(dout, q, k, v, out, lse, **options)
    return _backward_numpy(dout, q, k, v, out, lse, **options)


def selected_kernel(q, k, v, *, causal=False, layout="bshd", cu_seqlens_q=None, cu_seqlens_k=None,
                    max_seqlen_q=None, max_seqlen_k=None, backward=False, deterministic=False):
    """The name of the kernel attention() would run for these inputs, e.g. "cpu-avx2" or "sm80";
    with backward=True, the kernel of attention_backward() (deterministic as there).

    Arguments as in attention(), or as in attention_varlen() when cu_seqlens_q and cu_seqlens_k
    are given (layout then does not apply). The call is validated as a real one would be (a
    flashvision.Error names what it would reject), but nothing is computed or allocated. The
    name comes from the library's own dispatch, so benchmark records and logs need not guess it.
    """
    named = [("q", q), ("k", k), ("v", v)]
    named += [(n, x) for n, x in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k))
              if x is not None]
    framework = checks.common_framework(*named)
    causal = checks.check_bool("causal", causal)
    backward = checks.check_bool("backward", backward)
    deterministic = checks.check_bool("deterministic", deterministic)
    varlen = len(named) > 3
    if varlen:
        checks.check_rank("q", q, 3, "3 ([total_q, H, D])")
    else:
        layout = _dense_q(q, layout)
        q, k, v = (_to_bshd(x, layout) for x in (q, k, v))
    if framework == "torch":  # DLPack refuses tensors that require grad; the data is not read
        q, k, v, cu_seqlens_q, cu_seqlens_k = (
            None if x is None else x.detach() for x in (q, k, v, cu_seqlens_q, cu_seqlens_k))
    return _C.selected_kernel(
        q, k, v, causal=causal, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
        max_seqlen_q=checks.check_max_seqlen("max_seqlen_q", max_seqlen_q),
        max_seqlen_k=checks.check_max_seqlen("max_seqlen_k", max_seqlen_k), backward=backward,
        deterministic=deterministic)
