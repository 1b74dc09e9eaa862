"""Session 14: where a fwd+bwd call's time goes on the small image cases (issue 3's 0.4-0.75x
against FA2 there): host time per call (no sync), back-to-back time per call, do_bench's median
with the L2 flushed, and the kernels of one call with their mean device time (torch.profiler)."""
import os
import sys
import time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

import flashvision.torch as fvt

CASES = {"sdxl-cross": (2, 10, 4096, 77, 64), "sd15-cross-64": (2, 8, 4096, 77, 40),
         "sd15-self-32": (2, 8, 1024, 1024, 80), "sd15-self-16": (2, 8, 256, 256, 160),
         "vit-b16-224": (256, 12, 197, 197, 64), "sdxl-self-128": (2, 10, 4096, 4096, 64)}
flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")


def fa2(q, k, v):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v)


IMPLS = {"fv-sm80": ("sm80", fvt.scaled_dot_product_attention),
         "fv-auto": ("auto", fvt.scaled_dot_product_attention), "fa2": (None, fa2)}


def step(fn, q, k, v, dout):
    return torch.autograd.grad(fn(q, k, v), (q, k, v), dout)


for case in sys.argv[1:] or CASES:
    b, h, nq, nk, d = CASES[case]
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
               .requires_grad_() for n in (nq, nk, nk))
    dout = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16, generator=g)
    for name, (kernel, fn) in IMPLS.items():
        if kernel is not None:
            os.environ["FLASHVISION_CUDA_KERNEL"] = kernel
        run = lambda: step(fn, q, k, v, dout)
        for _ in range(5):
            run()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(50):
            run()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        bench = do_bench(run, warmup=20, rep=100, return_mode="median")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                flush.zero_()
                run()
            torch.cuda.synchronize()
        kernels = sorted((e for e in prof.events()
                          if e.device_type == torch.autograd.DeviceType.CUDA),
                         key=lambda e: e.time_range.start)
        calls, cur = [], None
        for e in kernels:
            if "fill" in e.name.lower() or "zero" in e.name.lower():
                cur = []
                calls.append(cur)
            elif cur is not None:
                cur.append(e)
        calls = [c for c in calls if c]
        per_name = {}
        spans = [c[-1].time_range.end - c[0].time_range.start for c in calls]
        for c in calls:
            for e in c:
                per_name.setdefault(e.name[:100], []).append(e.time_range.end - e.time_range.start)
        busy = sum(sum(ts) for ts in per_name.values()) / len(calls)
        print(f"{case} {name}: host {(t1 - t0) / 50 * 1e6:.1f} us/call, back-to-back "
              f"{(t2 - t0) / 50 * 1e6:.1f} us/call, do_bench {bench * 1e3:.1f} us, profiled span "
              f"{sum(spans) / len(spans):.1f} us, kernels busy {busy:.1f} us")
        for n, ts in per_name.items():
            print(f"    {sum(ts) / len(calls):8.2f} us/call  x{len(ts) / len(calls):.1f}  {n}")
    os.environ.pop("FLASHVISION_CUDA_KERNEL", None)
