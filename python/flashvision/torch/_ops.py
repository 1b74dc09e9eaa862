"""The torch custom ops flashvision::fwd and flashvision::bwd, their fake (meta) kernels and
autograd formula.

Both ops take q [B, N, H, D] (or packed [total, H, D] with cu_seqlens) with any strides whose
last dimension is contiguous, and allocate outputs with torch.empty_like so that an output follows
its input's memory order: a [B, H, N, D]-contiguous input gives a [B, H, N, D]-contiguous output,
with no copy on either side. The fake kernels allocate exactly as the real ones do.
"""

from typing import Optional, Tuple

import torch

from .. import _C

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"flashvision.torch needs torch >= 2.4 (torch.library.custom_op); this is "
                      f"torch {torch.__version__}")

Tensor = torch.Tensor


def _contiguous_last(x: Tensor) -> Tensor:
    """x, copied only when its last dimension is strided (the library reads rows of D)."""
    return x if x.stride(-1) == 1 or x.shape[-1] == 1 else x.contiguous()


def _empty_like(x: Tensor) -> Tensor:
    """An output shaped and ordered like x (tests swap in a poisoned version)."""
    return torch.empty_like(x)


def _empty_lse(q: Tensor, varlen: bool) -> Tensor:
    """The float32 lse output for q (tests swap in a poisoned version)."""
    return torch.empty(_lse_shape(q, varlen), dtype=torch.float32, device=q.device)


def _lse_shape(q: Tensor, varlen: bool):
    """[B, H, Nq] for dense q [B, Nq, H, D]; [H, total_q] for packed q [total_q, H, D]."""
    if varlen:
        return (q.shape[1], q.shape[0])
    return (q.shape[0], q.shape[2], q.shape[1])


def _stream(x: Tensor) -> int:
    """The current CUDA stream of x's device as an int (0 for CPU tensors)."""
    return torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0


def _dlpack(x: Optional[Tensor]):
    """x without autograd history: torch refuses to export a tensor that requires grad."""
    return None if x is None else x.detach()


class _on_device:
    """Makes x's GPU current for the call (a no-op for CPU tensors)."""

    def __init__(self, x: Tensor):
        self._guard = torch.cuda.device(x.device) if x.is_cuda else None

    def __enter__(self):
        if self._guard is not None:
            self._guard.__enter__()

    def __exit__(self, *exc):
        if self._guard is not None:
            self._guard.__exit__(*exc)


@torch.library.custom_op("flashvision::fwd", mutates_args=())
def fwd(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor],
        cu_seqlens_k: Optional[Tensor], max_seqlen_q: int, max_seqlen_k: int, scale: float,
        causal: bool) -> Tuple[Tensor, Tensor]:
    """out, lse = attention(q, k, v); scale 0 means 1/sqrt(D)."""
    q, k, v = (_contiguous_last(x) for x in (q, k, v))
    out = _empty_like(q)
    lse = _empty_lse(q, cu_seqlens_q is not None)
    with _on_device(q):
        _C.forward(_dlpack(q), _dlpack(k), _dlpack(v), out, lse, scale=scale, causal=causal,
                   cu_seqlens_q=_dlpack(cu_seqlens_q), cu_seqlens_k=_dlpack(cu_seqlens_k),
                   max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, stream=_stream(q))
    return out, lse


@fwd.register_fake
def _fwd_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal):
    q = _contiguous_last(q)
    lse = q.new_empty(_lse_shape(q, cu_seqlens_q is not None), dtype=torch.float32)
    return torch.empty_like(q), lse


@torch.library.custom_op("flashvision::bwd", mutates_args=())
def bwd(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor,
        cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], max_seqlen_q: int,
        max_seqlen_k: int, scale: float, causal: bool,
        deterministic: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """dq, dk, dv of fwd given dout."""
    dout, q, k, v, out = (_contiguous_last(x) for x in (dout, q, k, v, out))
    dq, dk, dv = _empty_like(q), _empty_like(k), _empty_like(v)
    with _on_device(q):
        _C.backward(_dlpack(dout), _dlpack(q), _dlpack(k), _dlpack(v), _dlpack(out),
                    _dlpack(lse), dq, dk, dv, scale=scale, causal=causal,
                    cu_seqlens_q=_dlpack(cu_seqlens_q), cu_seqlens_k=_dlpack(cu_seqlens_k),
                    max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
                    deterministic=deterministic, stream=_stream(q))
    return dq, dk, dv


@bwd.register_fake
def _bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
              scale, causal, deterministic):
    q, k, v = (_contiguous_last(x) for x in (q, k, v))
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fwd_setup_context(ctx, inputs, output):
    q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k)
    ctx.options = (max_seqlen_q, max_seqlen_k, scale, causal)
    # The gradient through lse (softmax probabilities times dlse) is not implemented.
    ctx.mark_non_differentiable(lse)


def _fwd_backward(ctx, dout, dlse):
    q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
    max_seqlen_q, max_seqlen_k, scale, causal = ctx.options
    dq, dk, dv = bwd(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                     max_seqlen_k, scale, causal, False)
    return dq, dk, dv, None, None, None, None, None, None


fwd.register_autograd(_fwd_backward, setup_context=_fwd_setup_context)
