"""Session 13: what one attention call on the cross-attention cases costs on the GPU, kernel by
kernel (torch.profiler / CUPTI), for flashvision and SDPA's cuDNN and FA2 backends, with the L2
flushed before each call as triton.testing.do_bench does. Prints per implementation the kernels
of one call with their mean device time, and the mean span from the first kernel's start to the
last kernel's end."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

import flashvision.torch as fvt

CASES = {"sdxl-cross": (2, 10, 4096, 77, 64), "sd15-cross-64": (2, 8, 4096, 77, 40),
         "sdxl-self-128": (2, 10, 4096, 4096, 64), "vit-b16-224": (256, 12, 197, 197, 64)}
ITERS = 30
flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")


def sdpa(backend):
    def run(q, k, v):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v)
    return run


IMPLS = {"flashvision": fvt.scaled_dot_product_attention, "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
         "fa2": sdpa(SDPBackend.FLASH_ATTENTION)}

for case in sys.argv[1:] or CASES:
    b, h, nq, nk, d = CASES[case]
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16, generator=g)
    flops = 4 * b * h * nq * nk * d
    for name, fn in IMPLS.items():
        try:
            for _ in range(5):
                fn(q, k, v)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(ITERS):
                    flush.zero_()
                    fn(q, k, v)
                torch.cuda.synchronize()
        except Exception as e:  # a backend that does not take the case
            print(f"{case} {name}: n/a ({type(e).__name__}: {str(e)[:80]})")
            continue
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        kernels.sort(key=lambda e: e.time_range.start)
        # Calls are separated by the flush kernel (the only one whose name has "fill" or "zero").
        calls, cur = [], None
        for e in kernels:
            if "fill" in e.name.lower() or "zero" in e.name.lower():
                cur = []
                calls.append(cur)
            elif cur is not None:
                cur.append(e)
        calls = [c for c in calls if c]
        per_name = {}
        spans = []
        for c in calls:
            spans.append(c[-1].time_range.end - c[0].time_range.start)
            for e in c:
                per_name.setdefault(e.name[:90], []).append(e.time_range.end - e.time_range.start)
        span = sum(spans) / len(spans)
        print(f"{case} {name}: {len(calls)} calls, span {span:.2f} us "
              f"({flops / span / 1e6:.1f} TFLOP/s over the span)")
        for n, ts in per_name.items():
            print(f"    {sum(ts) / len(calls):8.2f} us/call  x{len(ts) / len(calls):.0f}  {n}")
