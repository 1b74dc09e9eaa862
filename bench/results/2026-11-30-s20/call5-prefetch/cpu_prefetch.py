"""Scratch (session 20): the AMX forward with K^T tiles and V chunks prefetched ahead
(FLASHVISION_SCRATCH_AMX_PREFETCH="S,V", branch wip/amx-prefetch), settings alternated in one
process against torch's CPU SDPA. For each case, R rounds; each round times torch and flashvision
under every setting (median of a few calls each). Prints medians over rounds and ratios."""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import flashvision

VAR = "FLASHVISION_SCRATCH_AMX_PREFETCH"
SETTINGS = ["", "2,2", "4,2", "2,4", "1,1", "0,2", "4,0"]
CASES = {  # name: (B, H, N, D)
    "vae-mid-512": (1, 1, 4096, 512),
    "flux-1024": (1, 24, 4608, 128),
    "sd15-self-16": (2, 8, 256, 160),
    "vit-b16-224": (256, 12, 197, 64),
}
ROUNDS = int(os.environ.get("ROUNDS", "7"))


def timed(fn, target_s):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < target_s and len(times) < 200):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def use(setting):
    if setting:
        os.environ[VAR] = setting
    else:
        os.environ.pop(VAR, None)


for name, (b, h, n, d) in CASES.items():
    if len(sys.argv) > 1 and name not in sys.argv[1:]:
        continue
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    res = {s: [] for s in SETTINGS}
    torch_t = []
    budget = 0.05 if n * n * b * h * d < 1e10 else 0.15
    for r in range(ROUNDS):
        use("")
        torch_t.append(timed(lambda: F.scaled_dot_product_attention(q, k, v), budget))
        for s in SETTINGS:
            use(s)
            out = flashvision.attention(q, k, v, layout="bhsd")
            err = (out.float() - ref).abs().max().item()
            assert err < 0.05, (name, s, err)
            res[s].append(timed(lambda: flashvision.attention(q, k, v, layout="bhsd"), budget))
    use("")
    tm = statistics.median(torch_t)
    base = statistics.median(res[SETTINGS[0]])
    print(f"{name:14s} torch {tm * 1e3:8.3f} ms  rounds {' '.join(f'{x * 1e3:.3f}' for x in torch_t)}")
    for s in SETTINGS:
        m = statistics.median(res[s])
        print(f"  {s or 'default':8s} {m * 1e3:8.3f} ms  vs default {base / m:5.3f}x  vs torch {tm / m:5.2f}x  "
              f"rounds {' '.join(f'{x * 1e3:.3f}' for x in res[s])}")
    sys.stdout.flush()
