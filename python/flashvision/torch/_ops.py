"""The torch custom ops flashvision::fwd and flashvision::bwd, their fake (meta) kernels and
autograd formula, and flashvision::fwd_fp8 (float8_e4m3fn inputs, forward only).

Both ops take q [B, N, H, D] (or packed [total, H, D] with cu_seqlens) with any strides whose
last dimension is contiguous, and allocate outputs with torch.empty_like so that an output follows
its input's memory order: a [B, H, N, D]-contiguous input gives a [B, H, N, D]-contiguous output,
with no copy on either side. The fake kernels allocate exactly as the real ones do.

Eager calls that skip the ops (can_call_directly) also take SDPA's [B, H, N, D] tensors as they
are (heads_first): the library gets their shapes and strides permuted to [B, N, H, D], which
costs nothing, where transposed views would cost an autograd node each.
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


def _empty_like(x: Tensor, dtype: Optional[torch.dtype] = None) -> Tensor:
    """An output shaped and ordered like x, in x's dtype or `dtype` (tests swap in a poisoned
    version)."""
    return torch.empty_like(x, dtype=dtype)


def _empty_lse(q: Tensor, varlen: bool, heads_first: bool = False) -> Tensor:
    """The float32 lse output for q (tests swap in a poisoned version)."""
    return q.new_empty(_lse_shape(q, varlen, heads_first), dtype=torch.float32)


def _lse_shape(q: Tensor, varlen: bool, heads_first: bool = False):
    """[B, H, Nq] for dense q [B, Nq, H, D] (or heads_first [B, H, Nq, D]); [H, total_q] for
    packed q [total_q, H, D]."""
    if varlen:
        return (q.shape[1], q.shape[0])
    if heads_first:
        return (q.shape[0], q.shape[1], q.shape[2])
    return (q.shape[0], q.shape[2], q.shape[1])


# torch.dtype -> the dtype code of _C.forward_described; the codes come from the library.
_DTYPE_CODES = {getattr(torch, name): code for name, code in _C.torch_dtype_codes.items()}

# The current stream as a raw pointer, without building a torch.cuda.Stream object (which costs
# microseconds per call); older torch builds without it take the public route.
_current_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(device: int) -> int:
    """The current CUDA stream of GPU `device` as an int (0 for host memory, device < 0)."""
    if device < 0:
        return 0
    if _current_raw_stream is not None:
        return _current_raw_stream(device)
    return torch.cuda.current_stream(device).cuda_stream


def _describe(tensors, heads_first=False):
    """Each tensor (or None) as the (data_ptr, dtype code, device, shape, strides) tuple
    _C.forward_described takes (device -1 for host memory, else the GPU ordinal); None when one
    has a dtype or device the library does not take, so that the DLPack path reports it.
    heads_first: the rank-4 tensors are [B, H, N, D], described as the [B, N, H, D] tensors that
    their transposes would be (lse and cu_seqlens have other ranks and stay as they are).

    Reading these few attributes costs far less than a DLPack export and import per tensor."""
    described = []
    for x in tensors:
        if x is None:
            described.append(None)
            continue
        code = _DTYPE_CODES.get(x.dtype)
        if code is None:
            return None
        if x.is_cuda:
            device = x.get_device()
        elif x.is_cpu:
            device = -1
        else:
            return None
        shape, strides = x.shape, x.stride()
        if heads_first and len(shape) == 4:
            shape = (shape[0], shape[2], shape[1], shape[3])
            strides = (strides[0], strides[2], strides[1], strides[3])
        described.append((x.data_ptr(), code, device, shape, strides))
    return described


def _heads_second(tensors):
    """The [B, N, H, D] views of heads_first tensors, for the DLPack path (None stays None)."""
    return [None if x is None else x.transpose(1, 2) for x in tensors]


def _dlpack(x: Optional[Tensor]):
    """x without autograd history: torch refuses to export a tensor that requires grad."""
    return None if x is None else x.detach()


def _on_device(device: int, call, *args):
    """call(*args) with GPU `device` current (host memory, device < 0: just the call).

    Switching costs more than asking, and the tensors are usually on the current GPU already."""
    if device < 0 or torch._C._cuda_getDevice() == device:
        return call(*args)
    with torch.cuda.device(device):
        return call(*args)


def forward_impl(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor],
                 cu_seqlens_k: Optional[Tensor], max_seqlen_q: int, max_seqlen_k: int,
                 scale: float, causal: bool, need_lse: bool = True, heads_first: bool = False,
                 descales: Optional[Tuple[float, float, float]] = None):
    """What flashvision::fwd computes, called directly: (out, lse), lse None unless need_lse.
    heads_first: q, k, v and so out are [B, H, N, D] instead of [B, N, H, D]. descales:
    (descale_q, descale_k, descale_v) of float8_e4m3fn inputs (flashvision::fwd_fp8), whose out
    is bfloat16."""
    q, k, v = _contiguous_last(q), _contiguous_last(k), _contiguous_last(v)
    out = _empty_like(q, None if descales is None else torch.bfloat16)
    descales = descales or (1.0, 1.0, 1.0)
    lse = _empty_lse(q, cu_seqlens_q is not None, heads_first) if need_lse else None
    described = _describe((q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k), heads_first)
    if described is None:  # a dtype or device the library does not take: DLPack names it
        q_, k_, v_, out_ = _heads_second((q, k, v, out)) if heads_first else (q, k, v, out)
        _C.forward(_dlpack(q_), _dlpack(k_), _dlpack(v_), out_, lse, scale=scale, causal=causal,
                   cu_seqlens_q=_dlpack(cu_seqlens_q), cu_seqlens_k=_dlpack(cu_seqlens_k),
                   max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, descale_q=descales[0],
                   descale_k=descales[1], descale_v=descales[2])
        return out, lse
    device = described[0][2]
    _on_device(device, _C.forward_described, *described[:5], scale, causal, described[5],
               described[6], max_seqlen_q, max_seqlen_k, _stream(device), *descales)
    return out, lse


def backward_impl(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor,
                  cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor],
                  max_seqlen_q: int, max_seqlen_k: int, scale: float, causal: bool,
                  deterministic: bool, heads_first: bool = False):
    """What flashvision::bwd computes, called directly: (dq, dk, dv).
    heads_first: dout, q, k, v, out and so dq, dk, dv are [B, H, N, D]."""
    dout, q, k, v, out = (_contiguous_last(x) for x in (dout, q, k, v, out))
    dq, dk, dv = _empty_like(q), _empty_like(k), _empty_like(v)
    described = _describe((dout, q, k, v, out, lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k),
                          heads_first)
    if described is None:  # a dtype or device the library does not take: DLPack names it
        dout_, q_, k_, v_, out_, dq_, dk_, dv_ = (
            _heads_second((dout, q, k, v, out, dq, dk, dv)) if heads_first
            else (dout, q, k, v, out, dq, dk, dv))
        _C.backward(_dlpack(dout_), _dlpack(q_), _dlpack(k_), _dlpack(v_), _dlpack(out_),
                    _dlpack(lse), dq_, dk_, dv_, scale=scale, causal=causal,
                    cu_seqlens_q=_dlpack(cu_seqlens_q), cu_seqlens_k=_dlpack(cu_seqlens_k),
                    max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
                    deterministic=deterministic)
        return dq, dk, dv
    device = described[1][2]
    _on_device(device, _backward_described, described, scale, causal, max_seqlen_q,
               max_seqlen_k, deterministic, device)
    return dq, dk, dv


def _backward_described(described, scale, causal, max_seqlen_q, max_seqlen_k, deterministic,
                        device):
    """_C.backward_described with, on a GPU, its workspace from PyTorch's caching allocator on
    the current stream (a cudaMallocAsync per call costs tens of microseconds once the driver's
    pool has released its memory)."""
    options = (scale, causal, described[9], described[10], max_seqlen_q, max_seqlen_k,
               deterministic)
    workspace, workspace_bytes = None, 0
    if device >= 0:
        workspace_bytes = _C.backward_workspace_size_described(*described[:9], *options)
        if workspace_bytes > 0:
            workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device=f"cuda:{device}")
    _C.backward_described(*described[:9], *options, _stream(device),
                          0 if workspace is None else workspace.data_ptr(), workspace_bytes)


@torch.library.custom_op("flashvision::fwd", mutates_args=())
def fwd(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor],
        cu_seqlens_k: Optional[Tensor], max_seqlen_q: int, max_seqlen_k: int, scale: float,
        causal: bool) -> Tuple[Tensor, Tensor]:
    """out, lse = attention(q, k, v); scale 0 means 1/sqrt(D)."""
    return forward_impl(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                        causal)


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
    return backward_impl(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         max_seqlen_k, scale, causal, deterministic)


@bwd.register_fake
def _bwd_fake(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
              scale, causal, deterministic):
    q, k, v = (_contiguous_last(x) for x in (q, k, v))
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fwd_setup_context(ctx, inputs, output, heads_first=False):
    q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k)
    ctx.options = (max_seqlen_q, max_seqlen_k, scale, causal)
    ctx.heads_first = heads_first
    # The gradient through lse (softmax probabilities times dlse) is not implemented.
    ctx.mark_non_differentiable(lse)
    # dlse is never read: without this, autograd fills a zero tensor for it on every backward.
    ctx.set_materialize_grads(False)


def _fwd_backward(ctx, dout, dlse):
    if dout is None:  # grads are not materialized: out took no part in the loss
        return None, None, None, None, None, None, None, None, None
    q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
    max_seqlen_q, max_seqlen_k, scale, causal = ctx.options
    dq, dk, dv = backward(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                          max_seqlen_k, scale, causal, False, ctx.heads_first)
    return dq, dk, dv, None, None, None, None, None, None


fwd.register_autograd(_fwd_backward, setup_context=_fwd_setup_context)


@torch.library.custom_op("flashvision::fwd_fp8", mutates_args=())
def fwd_fp8(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool, descale_q: float,
            descale_k: float, descale_v: float) -> Tuple[Tensor, Tensor]:
    """out (bfloat16), lse = attention of float8_e4m3fn q, k, v times their descales; forward
    only (no autograd formula: FP8 attention serves inference)."""
    return forward_impl(q, k, v, None, None, 0, 0, scale, causal,
                        descales=(descale_q, descale_k, descale_v))


@fwd_fp8.register_fake
def _fwd_fp8_fake(q, k, v, scale, causal, descale_q, descale_k, descale_v):
    q = _contiguous_last(q)
    lse = q.new_empty(_lse_shape(q, False), dtype=torch.float32)
    return torch.empty_like(q, dtype=torch.bfloat16), lse


def _plain(x: Optional[Tensor]) -> bool:
    return x is None or type(x) is Tensor


def can_call_directly(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor] = None,
                      cu_seqlens_k: Optional[Tensor] = None) -> bool:
    """True when calling forward_impl / backward_impl directly does exactly what the ops would,
    minus their dispatch (tens of microseconds a call): eager execution of plain CPU or CUDA
    tensors (meta tensors need the fake kernels), with nothing around that traces, transforms or
    watches ops (torch.compile, torch.jit.trace, make_fx and other dispatch modes, torch-function
    modes, torch.func transforms, the profiler)."""
    return not (torch.compiler.is_compiling()
                or not (_plain(q) and _plain(k) and _plain(v) and _plain(cu_seqlens_q)
                        and _plain(cu_seqlens_k))
                or not (q.is_cpu or q.is_cuda)
                or torch._C._len_torch_dispatch_stack() != 0
                or torch._C._is_torch_function_mode_enabled()
                or torch._C._are_functorch_transforms_active()
                or torch._C._get_tracing_state() is not None
                or torch.autograd.profiler._is_profiler_enabled)


def _any_requires_grad(tensors) -> bool:
    return any(x.requires_grad for x in tensors)


class _DirectAttention(torch.autograd.Function):
    """forward_impl with the ops' autograd formula, for eager calls that need gradients (in
    heads_first order too, where the ops would need transposes around them)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
                causal, heads_first):
        output = forward_impl(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                              scale, causal, heads_first=heads_first)
        _fwd_setup_context(ctx, (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                 scale, causal), output, heads_first)
        return output

    @staticmethod
    def backward(ctx, dout, dlse):
        # Under create_graph, backward() below takes the bwd op, which has no autograd formula
        # and so reports a double backward as the op path does.
        return *_fwd_backward(ctx, dout, dlse), None


def forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal,
            need_lse=True, heads_first=False):
    """(out, lse) of flashvision::fwd, called directly where that is indistinguishable (see
    can_call_directly); lse may be None when not need_lse. heads_first: q, k, v and out are
    [B, H, N, D]; the op sees their [B, N, H, D] transposes, direct calls the tensors as they are
    (a transpose would cost an autograd node each)."""
    args = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal)
    if not can_call_directly(q, k, v, cu_seqlens_q, cu_seqlens_k):
        if heads_first:
            out, lse = fwd(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), *args[3:])
            return out.transpose(1, 2), lse
        return fwd(*args)
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return _DirectAttention.apply(*args, heads_first)
    return forward_impl(*args, need_lse=need_lse, heads_first=heads_first)


def backward(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
             scale, causal, deterministic, heads_first=False):
    """(dq, dk, dv) of flashvision::bwd, called directly where that is indistinguishable: as in
    forward(), and with no graph to record (the op's autograd node reports double backward).
    heads_first as in forward()."""
    args = (dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale,
            causal, deterministic)
    if (can_call_directly(q, k, v, cu_seqlens_q, cu_seqlens_k) and _plain(dout) and _plain(out)
            and _plain(lse) and not (torch.is_grad_enabled() and _any_requires_grad(args[:6]))):
        return backward_impl(*args, heads_first=heads_first)
    if heads_first:
        dq, dk, dv = bwd(*(x.transpose(1, 2) for x in args[:5]), *args[5:])
        return dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2)
    return bwd(*args)


def forward_fp8(q, k, v, scale, causal, descales, need_lse=True, heads_first=False):
    """(out, lse) of flashvision::fwd_fp8, called directly where that is indistinguishable (see
    can_call_directly); descales is (descale_q, descale_k, descale_v); heads_first as in
    forward()."""
    if not can_call_directly(q, k, v):
        if heads_first:
            out, lse = fwd_fp8(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale,
                               causal, *descales)
            return out.transpose(1, 2), lse
        return fwd_fp8(q, k, v, scale, causal, *descales)
    return forward_impl(q, k, v, None, None, 0, 0, scale, causal, need_lse=need_lse,
                        heads_first=heads_first, descales=descales)
