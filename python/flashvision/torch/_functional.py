"""Functional PyTorch API: SDPA-compatible and flash-attn-compatible entry points.

All of them are views plus one call of the flashvision::fwd op, so they are differentiable and
trace into torch.compile graphs (fullgraph) without breaks. Eager calls skip the op's dispatch
where that changes nothing (_ops.can_call_directly), and then the transposes of SDPA's
[B, H, N, D] tensors too (heads_first).
"""

import torch

from .. import _checks as checks
from . import _ops

# The FP8 dtype flashvision.attention_fp8 takes; the 16-bit entry points send callers there.
FLOAT8 = torch.float8_e4m3fn


def _check_tensor(name, x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {checks.type_name(x)}")


def forward(q, k, v, *, scale, causal, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=0,
            max_seqlen_k=0, need_lse=True, heads_first=False):
    """(out, lse) of the flashvision::fwd op for checked arguments; q is [B, N, H, D] or packed,
    or [B, H, N, D] with heads_first (out then too). Without need_lse, lse may be None (eager
    calls then skip allocating and writing it). TypeError for float8_e4m3fn inputs, which
    flashvision.attention_fp8 takes with their descales."""
    if q.dtype == FLOAT8:
        raise TypeError("q is float8_e4m3fn: FP8 attention is flashvision.attention_fp8, which "
                        "takes the tensors' descale factors (forward only)")
    return _ops.forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                        causal, need_lse, heads_first)


def backward(dout, q, k, v, out, lse, *, scale, causal, deterministic, cu_seqlens_q=None,
             cu_seqlens_k=None, max_seqlen_q=0, max_seqlen_k=0):
    """(dq, dk, dv) of the flashvision::bwd op for checked arguments."""
    return _ops.backward(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         max_seqlen_k, scale, causal, deterministic)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on flashvision.

    query [B, H, Nq, D] (or [H, Nq, D]), key and value [B, Hkv, Nk, D]; returns [B, H, Nq, D].
    Not supported: attn_mask, dropout_p > 0, and is_causal with Nq != Nk (SDPA aligns its causal
    mask to the top-left corner, flashvision to the bottom-right; they agree only when Nq == Nk).
    """
    if not (type(query) is torch.Tensor and type(key) is torch.Tensor
            and type(value) is torch.Tensor):  # the common case needs no loop
        for name, x in (("query", query), ("key", key), ("value", value)):
            _check_tensor(name, x)
    if attn_mask is not None:
        raise NotImplementedError(
            f"attn_mask is a {checks.type_name(attn_mask)}; flashvision supports no attention "
            "mask (expected None; use is_causal for a causal mask)")
    checks.check_dropout("dropout_p", dropout_p)
    checks.check_bool("is_causal", is_causal)
    checks.check_bool("enable_gqa", enable_gqa)
    scale = checks.check_scale(scale)
    rank = query.dim()
    if rank not in (3, 4):
        raise ValueError(f"query has rank {rank} (shape {tuple(query.shape)}); expected "
                         "[B, H, N, D] or [H, N, D]")
    for name, x in (("key", key), ("value", value)):
        if x.dim() != rank:
            raise ValueError(f"{name} has rank {x.dim()} but query has {rank}; expected "
                             "the same rank (flashvision does not broadcast batch dimensions)")
    heads, heads_kv = query.shape[-3], key.shape[-3]
    if heads != heads_kv and not enable_gqa:
        raise ValueError(f"key has {heads_kv} heads but query has {heads}; expected equal head "
                         "counts, or enable_gqa=True for grouped-query attention")
    if heads_kv > 0 and heads % heads_kv != 0:
        raise ValueError(f"key has {heads_kv} heads and query {heads}; expected the query heads "
                         "to be a multiple of the key heads (enable_gqa)")
    if is_causal and query.shape[-2] != key.shape[-2]:
        raise NotImplementedError(
            f"is_causal=True with query length {query.shape[-2]} != key length "
            f"{key.shape[-2]}: SDPA aligns the causal mask to the top-left corner, flashvision "
            "to the bottom-right (as flash-attn); the two agree only for equal lengths. Use "
            "flashvision.torch.flash_attn_func for the bottom-right mask.")
    batched = rank == 4
    if not batched:
        query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
    out, _ = forward(query, key, value, scale=scale, causal=is_causal, need_lse=False,
                     heads_first=True)
    return out if batched else out.squeeze(0)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
    """flash_attn.flash_attn_func on flashvision: q [B, Nq, H, D], k and v [B, Nk, Hkv, D].

    causal is aligned to the bottom-right corner, as in flash-attn >= 2.1.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        _check_tensor(name, x)
    checks.check_dropout("dropout_p", dropout_p)
    checks.check_rank("q", q, 4, "4 ([B, N, H, D])")
    out, _ = forward(q, k, v, scale=checks.check_scale(softmax_scale, "softmax_scale"),
                     causal=checks.check_bool("causal", causal), need_lse=False)
    return out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False):
    """flash_attn.flash_attn_varlen_func on flashvision: packed q [total_q, H, D], k and v
    [total_k, Hkv, D], int32 cu_seqlens [B + 1] on the tensors' device."""
    for name, x in (("q", q), ("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        _check_tensor(name, x)
    checks.check_dropout("dropout_p", dropout_p)
    checks.check_rank("q", q, 3, "3 ([total_q, H, D])")
    out, _ = forward(q, k, v, scale=checks.check_scale(softmax_scale, "softmax_scale"),
                     causal=checks.check_bool("causal", causal), cu_seqlens_q=cu_seqlens_q,
                     cu_seqlens_k=cu_seqlens_k,
                     max_seqlen_q=checks.check_max_seqlen("max_seqlen_q", max_seqlen_q),
                     max_seqlen_k=checks.check_max_seqlen("max_seqlen_k", max_seqlen_k),
                     need_lse=False)
    return out
