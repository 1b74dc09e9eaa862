#!/usr/bin/env python3
"""Where the time of one flashvision forward+backward through PyTorch goes, on a GPU.

Times, on one benchmark case (bf16, [B, H, N, D] tensors as `python -m flashvision.bench` makes
them), with CUDA events around back-to-back calls (no L2 flush, as the CLI times):
  kernels   flashvision.torch's forward_impl + backward_impl called directly (no autograd),
  autograd  scaled_dot_product_attention + torch.autograd.grad, as the bench's fwd+bwd pass,
  sdpa-*    PyTorch's SDPA backends the same way,
then prints torch.profiler's table (CPU and CUDA time per op) of a few autograd calls, so that
host overhead (gaps the GPU waits through) shows next to the kernels' own time.

Usage: python_call_overhead.py [CASE ...]   (default: sd15-cross-64 vit-b16-224)
"""
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from flashvision.bench.cases import CASES
from flashvision.torch import scaled_dot_product_attention
from flashvision.torch._ops import backward_impl, forward_impl

REPEATS = 50


def event_ms(fn):
    """Median ms per call of fn over REPEATS back-to-back calls (one sync at the end of each)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def host_ms(fn):
    """Median host ms to issue fn (the GPU may still be running when it returns)."""
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    return sorted(times)[len(times) // 2]


def inputs(case):
    shape = (case.B, case.H, case.Nq, case.D)
    kv_shape = (case.B, case.H, case.Nk, case.D)
    q = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(kv_shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(kv_shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    return q, k, v, torch.randn_like(q)


def report(case):
    q, k, v, dout = inputs(case)
    scale = 1.0 / math.sqrt(case.D)
    qb, kb, vb, db = (x.detach().transpose(1, 2) for x in (q, k, v, dout))

    def kernels():
        out, lse = forward_impl(qb, kb, vb, None, None, case.Nq, case.Nk, scale, False)
        backward_impl(db, qb, kb, vb, out, lse, None, None, case.Nq, case.Nk, scale, False, False)

    def autograd(attention):
        def call():
            out = attention(q, k, v, scale=scale)
            torch.autograd.grad(out, (q, k, v), dout)
        return call

    rows = [("flashvision kernels (direct)", kernels),
            ("flashvision autograd", autograd(scaled_dot_product_attention))]
    for name, backend in (("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("sdpa-flash", SDPBackend.FLASH_ATTENTION)):
        def sdpa(q_, k_, v_, scale, backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q_, k_, v_, scale=scale)
        rows.append((f"{name} autograd", autograd(sdpa)))
    print(f"== {case.name}: B={case.B} H={case.H} Nq={case.Nq} Nk={case.Nk} D={case.D}, bf16")
    for name, fn in rows:
        try:
            print(f"  {name:32s} gpu {event_ms(fn) * 1e3:9.1f} us   host issue "
                  f"{host_ms(fn) * 1e3:9.1f} us")
        except RuntimeError as exc:  # a backend that does not take the shape
            print(f"  {name:32s} not run: {str(exc).splitlines()[0]}")
    call = autograd(scaled_dot_product_attention)
    call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            call()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=18))


def main():
    wanted = sys.argv[1:] or ["sd15-cross-64", "vit-b16-224"]
    for name in wanted:
        report(CASES[name])


if __name__ == "__main__":
    main()
