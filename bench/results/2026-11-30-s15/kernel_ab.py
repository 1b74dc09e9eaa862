"""Session 15: mean device time of the forward and backward main kernels (fwd_kernel, bwd_kernel)
per shape, for the package on PYTHONPATH (torch.profiler, 5 fwd+bwd calls after 3 warm-ups, bf16;
FLOPs: 4 B H N^2 D forward, 2.5 times that backward)."""
import sys
import torch
from torch.profiler import ProfilerActivity, profile

import flashvision.torch as fvt

SHAPES = {"d128-n4096": (4, 16, 4096, 128), "sdxl-self-128": (2, 10, 4096, 64),
          "flux-1024": (1, 24, 4608, 128), "d64-n4096": (4, 32, 4096, 64),
          "sd15-self-64": (2, 8, 4096, 40), "dit-xl2": (16, 16, 1024, 72),
          "sd15-self-32": (2, 8, 1024, 80), "vit-b16": (256, 12, 197, 64),
          "vit-h14": (128, 16, 257, 80)}
tag = sys.argv[1]
for name, (b, h, n, d) in SHAPES.items():
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16).requires_grad_()
               for _ in range(3))
    dout = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    def call():
        out = fvt.scaled_dot_product_attention(q, k, v)
        torch.autograd.grad(out, (q, k, v), dout)
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            call()
        torch.cuda.synchronize()
    for kernel, share in (("fwd_kernel", 1.0), ("bwd_kernel", 2.5)):
        t = sum(e.device_time for e in prof.key_averages()
                if e.device_type.name == "CUDA" and kernel in e.key)
        flops = share * 4 * b * h * n * n * d
        print(f"{tag:6s} {name:14s} {kernel} {t:9.1f} us  {flops / t / 1e6:6.1f} TFLOP/s",
              flush=True)
