"""Session 41, call 1: one recorded forward of each D = 128 case (FLASHVISION_SM90_TIMELINES, a
build with the option ON) after 30 unrecorded ones, bf16, [B, N, H, D], no LSE (Q scaled in the
kernel). Usage: trace_cases.py OUT_DIR; writes OUT_DIR/trace-CASE-{0,1}.bin."""
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
torch.manual_seed(41)
for name, (b, h, n, d) in CASES.items():
    q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for _ in range(30):
        fv.attention(q, k, v)
    torch.cuda.synchronize()
    for rep in range(2):
        os.environ["FLASHVISION_SM90_TIMELINES"] = f"{out}/trace-{name}-{rep}.bin"
        fv.attention(q, k, v)
        del os.environ["FLASHVISION_SM90_TIMELINES"]
        for _ in range(10):
            fv.attention(q, k, v)
    torch.cuda.synchronize()
    print(name, "recorded")
