"""flashvision's CPU forward through the PyTorch op against torch's CPU SDPA, interleaved call by
call (fv, torch, fv, ...) so that both see the same machine state; median ms of each."""
import sys, time, torch
import flashvision
from flashvision.torch import scaled_dot_product_attention as fv_sdpa
import torch.nn.functional as F

torch.set_num_threads(16)
CASES = {"vit-b16-224": (256, 12, 197, 64), "vit-l14-336": (64, 16, 577, 64),
         "vit-h14-224": (128, 16, 257, 80), "dit-xl2-512": (16, 16, 1024, 72),
         "sdxl-self-128": (2, 10, 4096, 64), "sd15-self-32": (2, 8, 1024, 80),
         "sd15-self-16": (2, 8, 256, 160)}
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 9
for name, (B, H, N, D) in CASES.items():
    q, k, v = (torch.randn(B, H, N, D) for _ in range(3))
    fns = {"fv": lambda: fv_sdpa(q, k, v), "torch": lambda: F.scaled_dot_product_attention(q, k, v)}
    for f in fns.values(): f(); f()
    t = {n: [] for n in fns}
    for _ in range(reps):
        for n, f in fns.items():
            t0 = time.perf_counter(); f(); t[n].append((time.perf_counter() - t0) * 1e3)
    med = {n: sorted(x)[len(x) // 2] for n, x in t.items()}
    print(f"{name:14s} fv {med['fv']:8.3f} ms  torch {med['torch']:8.3f} ms  ratio {med['torch'] / med['fv']:.2f}", flush=True)
