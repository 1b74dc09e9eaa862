"""Session 40, call 1: one traced forward of each case (FLASHVISION_SM90_TRACE, branch
wip/sm90-trace) after 30 untraced ones, bf16, [B, N, H, D], no LSE (Q scaled in the kernel)."""
import os
import sys

import torch

import flashvision as fv

CASES = {
    "d128-n1024": (16, 16, 1024, 128),
    "d128-n4096": (4, 16, 4096, 128),
    "flux-1024": (1, 24, 4608, 128),
    "d128-n16384": (1, 16, 16384, 128),
}
out = sys.argv[1]
torch.manual_seed(40)
for name, (b, h, n, d) in CASES.items():
    q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for _ in range(30):
        fv.attention(q, k, v)
    torch.cuda.synchronize()
    for rep in range(2):
        os.environ["FLASHVISION_SM90_TRACE"] = f"{out}/trace-{name}-{rep}.bin"
        fv.attention(q, k, v)
        del os.environ["FLASHVISION_SM90_TRACE"]
        for _ in range(10):
            fv.attention(q, k, v)
    torch.cuda.synchronize()
    print(name, "traced")
