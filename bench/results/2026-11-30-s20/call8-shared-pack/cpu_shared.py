"""Scratch (session 20): the AMX forward's K/V packed once by all threads where they outnumber
the streams (branch wip/amx-shared-pack) against each thread packing for itself
(FLASHVISION_SCRATCH_AMX_SHARED=0), alternated in one process, with torch's CPU SDPA in every
round. Medians over rounds."""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import flashvision

VAR = "FLASHVISION_SCRATCH_AMX_SHARED"
SETTINGS = ["", "0"]
LABELS = {"": "shared", "0": "per-thread"}
CASES = {  # name: (B, H, N, D); streams below 16 take the shared packing
    "vae-mid-512": (1, 1, 4096, 512),
    "b1-h8-n4096-d64": (1, 8, 4096, 64),
    "b1-h4-n8192-d128": (1, 4, 8192, 128),
    "sd15-self-16": (2, 8, 256, 160),
}
ROUNDS = int(os.environ.get("ROUNDS", "9"))


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
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    res = {s: [] for s in SETTINGS}
    torch_t = []
    budget = 0.05 if n * n * b * h * d < 1e10 else 0.15
    for r in range(ROUNDS):
        use("")
        torch_t.append(timed(lambda: F.scaled_dot_product_attention(q, k, v), budget))
        order = SETTINGS if r % 2 == 0 else SETTINGS[::-1]
        for s in order:
            use(s)
            out = flashvision.attention(q, k, v, layout="bhsd")
            err = (out.float() - ref).abs().max().item()
            assert err < 0.05, (name, s, err)
            res[s].append(timed(lambda: flashvision.attention(q, k, v, layout="bhsd"), budget))
    use("")
    tm = statistics.median(torch_t)
    base = statistics.median(res["0"])
    print(f"{name:18s} torch {tm * 1e3:8.3f} ms  rounds {' '.join(f'{x * 1e3:.3f}' for x in torch_t)}")
    for s in SETTINGS:
        m = statistics.median(res[s])
        print(f"  {LABELS[s]:10s} {m * 1e3:8.3f} ms  vs per-thread {base / m:5.3f}x  vs torch {tm / m:5.2f}x  "
              f"rounds {' '.join(f'{x * 1e3:.3f}' for x in res[s])}")
    wins = sum(a < b_ for a, b_ in zip(res[""], res["0"]))
    print(f"  shared faster in {wins} of {ROUNDS} rounds")
    sys.stdout.flush()
