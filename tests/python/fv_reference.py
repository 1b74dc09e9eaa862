"""float64 numpy reference of attention forward and backward, and comparison helpers.

Layout [B, N, H, D] (packed [total, H, D] for varlen); causal is bottom-right aligned; rows that
see no key output 0 with lse -inf and get zero gradients, as the library documents.
"""

import numpy as np

# Tolerances by dtype (absolute and relative, applied as |x - ref| <= atol + rtol * |ref|).
TOLERANCE = {
    "float32": (2e-5, 2e-5),
    "float16": (4e-3, 4e-3),
    "bfloat16": (3e-2, 3e-2),
}


def random_inputs(rng, shape, dtype):
    """Standard-normal values rounded to dtype (numpy float32 / float16)."""
    return rng.standard_normal(shape).astype(dtype)


def _mask(nq, nk, causal):
    """[nq, nk] boolean: key j visible from query i (bottom-right aligned when causal)."""
    if not causal:
        return np.ones((nq, nk), dtype=bool)
    i = np.arange(nq)[:, None]
    j = np.arange(nk)[None, :]
    return j <= i + nk - nq


def _probabilities(q, k, scale, causal):
    """P [B, H, Nq, Nk] and lse [B, H, Nq] from q [B, Nq, H, D], k [B, Nk, H, D] (float64)."""
    s = np.einsum("bnhd,bmhd->bhnm", q, k) * scale
    visible = _mask(q.shape[1], k.shape[1], causal)
    s = np.where(visible, s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    safe_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.exp(s - safe_max)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
        lse = np.where(total[..., 0] > 0, np.log(np.where(total > 0, total, 1.0))[..., 0]
                       + safe_max[..., 0], -np.inf)
    return p, lse


def _expand_heads(x, heads):
    return np.repeat(x, heads // x.shape[2], axis=2)


def _reduce_heads(dx, heads_kv):
    b, n, h, d = dx.shape
    return dx.reshape(b, n, heads_kv, h // heads_kv, d).sum(axis=3)


def forward(q, k, v, scale=None, causal=False):
    """(out, lse) in float64 for q [B, Nq, H, D], k and v [B, Nk, Hkv, D]."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    heads = q.shape[2]
    k, v = _expand_heads(k, heads), _expand_heads(v, heads)
    p, lse = _probabilities(q, k, scale, causal)
    return np.einsum("bhnm,bmhd->bnhd", p, v), lse


def backward(dout, q, k, v, scale=None, causal=False):
    """(dq, dk, dv) in float64; dk and dv summed over each GQA group."""
    dout, q, k, v = (np.asarray(x, dtype=np.float64) for x in (dout, q, k, v))
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    heads, heads_kv = q.shape[2], k.shape[2]
    ke, ve = _expand_heads(k, heads), _expand_heads(v, heads)
    p, _ = _probabilities(q, ke, scale, causal)
    out = np.einsum("bhnm,bmhd->bnhd", p, ve)
    dv = np.einsum("bhnm,bnhd->bmhd", p, dout)
    dp = np.einsum("bnhd,bmhd->bhnm", dout, ve)
    delta = np.einsum("bnhd,bnhd->bhn", dout, out)[..., None]
    ds = p * (dp - delta)
    dq = np.einsum("bhnm,bmhd->bnhd", ds, ke) * scale
    dk = np.einsum("bhnm,bnhd->bmhd", ds, q) * scale
    return dq, _reduce_heads(dk, heads_kv), _reduce_heads(dv, heads_kv)


def _segments(cu_seqlens):
    return [(int(a), int(b)) for a, b in zip(cu_seqlens[:-1], cu_seqlens[1:])]


def forward_varlen(q, k, v, cu_q, cu_k, scale=None, causal=False):
    """(out [total_q, H, D], lse [H, total_q]) in float64, sequence by sequence."""
    out = np.zeros(q.shape, dtype=np.float64)
    lse = np.full((q.shape[1], q.shape[0]), -np.inf)
    for (q0, q1), (k0, k1) in zip(_segments(cu_q), _segments(cu_k)):
        if q1 == q0:
            continue
        if k1 == k0:
            continue  # no keys: zero output, lse -inf
        o, seq_lse = forward(q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], scale, causal)
        out[q0:q1], lse[:, q0:q1] = o[0], seq_lse[0]
    return out, lse


def backward_varlen(dout, q, k, v, cu_q, cu_k, scale=None, causal=False):
    """(dq, dk, dv) in float64 for packed sequences."""
    dq = np.zeros(q.shape, dtype=np.float64)
    dk = np.zeros(k.shape, dtype=np.float64)
    dv = np.zeros(v.shape, dtype=np.float64)
    for (q0, q1), (k0, k1) in zip(_segments(cu_q), _segments(cu_k)):
        if q1 == q0 or k1 == k0:
            continue
        g = backward(dout[None, q0:q1], q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], scale,
                     causal)
        dq[q0:q1], dk[k0:k1], dv[k0:k1] = g[0][0], g[1][0], g[2][0]
    return dq, dk, dv


def assert_close(actual, expected, dtype_name, what, scale_tol=1.0):
    """Asserts |actual - expected| <= atol + rtol * |expected| element-wise (NaN fails)."""
    atol, rtol = (t * scale_tol for t in TOLERANCE[dtype_name])
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    both_neg_inf = np.isneginf(actual) & np.isneginf(expected)
    with np.errstate(invalid="ignore"):
        err = np.where(both_neg_inf, 0.0, np.abs(actual - expected))
    bound = atol + rtol * np.abs(np.where(both_neg_inf, 0.0, expected))
    bad = ~(err <= bound)
    if bad.any():
        index = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), bad.shape)
        raise AssertionError(
            f"{what} ({dtype_name}): {bad.sum()} of {bad.size} elements out of tolerance "
            f"(atol {atol:g}, rtol {rtol:g}); worst at {index}: got {actual[index]!r}, "
            f"expected {expected[index]!r}; NaN count {np.isnan(actual).sum()}")
