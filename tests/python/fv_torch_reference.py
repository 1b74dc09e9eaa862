"""float64 torch reference (differentiable) and comparison helpers for the torch tests."""

import torch

# Absolute floor of the error allowed on top of twice PyTorch's own error in the same dtype.
ERROR_FLOOR = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def randn(generator, shape, dtype=torch.float32, device="cpu", requires_grad=False):
    x = torch.randn(shape, generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)
    return x.requires_grad_(requires_grad)


def attention_bhsd(q, k, v, scale=None, causal=False):
    """softmax(q k^T * scale) v in q's dtype for q [B, H, Nq, D], k/v [B, Hkv, Nk, D]; causal is
    bottom-right aligned. Every row must see at least one key (no fully masked rows)."""
    heads, heads_kv = q.shape[-3], k.shape[-3]
    if heads != heads_kv:
        k = k.repeat_interleave(heads // heads_kv, dim=-3)
        v = v.repeat_interleave(heads // heads_kv, dim=-3)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        nq, nk = q.shape[-2], k.shape[-2]
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + nk - nq, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def attention_bshd(q, k, v, scale=None, causal=False):
    """attention_bhsd for [B, N, H, D] tensors."""
    out = attention_bhsd(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale, causal)
    return out.transpose(1, 2)


def float64_leaf(x):
    return x.detach().to(torch.float64).requires_grad_(x.requires_grad)


def max_error(actual, expected):
    return (actual.detach().to(torch.float64) - expected.detach().to(torch.float64)).abs().max()


def assert_close(actual, expected, atol, rtol, what):
    """|actual - expected| <= atol + rtol |expected| element-wise (NaN fails)."""
    a = actual.detach().to(torch.float64).cpu()
    e = expected.detach().to(torch.float64).cpu()
    assert a.shape == e.shape, f"{what}: shape {tuple(a.shape)} != {tuple(e.shape)}"
    bad = ~((a - e).abs() <= atol + rtol * e.abs())
    if bad.any():
        index = tuple(int(i) for i in (bad.nonzero()[0]))
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.numel()} out of tolerance (atol {atol}, rtol "
            f"{rtol}); first at {index}: got {a[index].item()}, expected {e[index].item()}; "
            f"max error {(a - e).abs().nan_to_num(float('inf')).max().item():g}")


def assert_as_accurate_as_torch(ours, torch_same_dtype, reference64, what):
    """Our error against the float64 reference is at most twice PyTorch's own error in the same
    dtype, plus a floor (the FlashAttention test criterion)."""
    ours_error = max_error(ours, reference64)
    torch_error = max_error(torch_same_dtype, reference64)
    bound = 2 * torch_error + ERROR_FLOOR[ours.dtype]
    assert not torch.isnan(ours).any(), f"{what}: NaN in the output"
    assert ours_error <= bound, (
        f"{what}: error {ours_error:.3g} vs float64, PyTorch's own error {torch_error:.3g} "
        f"(bound {bound:.3g})")
