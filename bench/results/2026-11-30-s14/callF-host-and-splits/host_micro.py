"""Session 14: the host's microseconds per call of each piece of flashvision's torch path (and
of FA2's and a trivial autograd graph for scale), sdxl-cross inputs in SDPA's [B, H, N, D] order.
Loops of N calls without a sync inside; a sync between pieces."""
import time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashvision.torch as fvt
from flashvision import _C
from flashvision.torch import _ops

b, h, nq, nk, d = 2, 10, 4096, 77, 64
g = torch.Generator(device="cuda").manual_seed(0)
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
           .requires_grad_() for n in (nq, nk, nk))
dout = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16, generator=g)
qd, kd, vd = (x.detach() for x in (q, k, v))
scale = d ** -0.5
out, lse = _ops.forward_impl(qd, kd, vd, None, None, 0, 0, scale, False, heads_first=True)
dq, dk, dv = (torch.empty_like(x) for x in (qd, kd, vd))
fdesc = _ops._describe((qd, kd, vd, out, lse, None, None), True)
bdesc = _ops._describe((dout, qd, kd, vd, out, lse, dq, dk, dv, None, None), True)
options = (scale, False, None, None, 0, 0, False)
stream = _ops._stream(0)
ws = _C.backward_workspace_size_described(*bdesc[:9], *options)
workspace = torch.empty(ws, dtype=torch.uint8, device="cuda")


def fa2(q, k, v):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v)


PIECES = {
    "fv fwd (no grad)": lambda: fvt.scaled_dot_product_attention(qd, kd, vd),
    "fa2 fwd (no grad)": lambda: fa2(qd, kd, vd),
    "fv fwd+bwd": lambda: torch.autograd.grad(fvt.scaled_dot_product_attention(q, k, v),
                                              (q, k, v), dout),
    "fa2 fwd+bwd": lambda: torch.autograd.grad(fa2(q, k, v), (q, k, v), dout),
    "trivial autograd (q*2).grad": lambda: torch.autograd.grad(q * 2, (q,), dout),
    "fv fwd with grad (graph only)": lambda: fvt.scaled_dot_product_attention(q, k, v),
    "forward_impl": lambda: _ops.forward_impl(qd, kd, vd, None, None, 0, 0, scale, False,
                                              heads_first=True),
    "_describe x7": lambda: _ops._describe((qd, kd, vd, out, lse, None, None), True),
    "_C.forward_described": lambda: _C.forward_described(*fdesc[:5], scale, False, None, None,
                                                         0, 0, stream),
    "backward_impl": lambda: _ops.backward_impl(dout, qd, kd, vd, out, lse, None, None, 0, 0,
                                                scale, False, False, heads_first=True),
    "_describe x11": lambda: _ops._describe((dout, qd, kd, vd, out, lse, dq, dk, dv, None,
                                             None), True),
    "_C.backward_workspace_size_described": lambda: _C.backward_workspace_size_described(
        *bdesc[:9], *options),
    "torch.empty(workspace)": lambda: torch.empty(ws, dtype=torch.uint8, device="cuda"),
    "torch.empty_like": lambda: torch.empty_like(qd),
    "_C.backward_described": lambda: _C.backward_described(*bdesc[:9], *options, stream,
                                                           workspace.data_ptr(), ws),
    "can_call_directly": lambda: _ops.can_call_directly(qd, kd, vd),
}


def us(fn, n=300):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


for rnd in range(3):
    print(f"round {rnd}: " + ", ".join(f"{name} {us(fn):.1f}" for name, fn in PIECES.items()),
          flush=True)
