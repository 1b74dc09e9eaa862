"""Scratch (session 20): where the AMX forward's time goes, by leaving steps out
(FLASHVISION_SCRATCH_AMX_SKIP bits: 1 scores, 2 softmax, 4 P V, 8 K/V packing after a thread's
first key block; outputs are then garbage: timing only), settings alternated in one process."""
import os
import statistics
import sys
import time

import torch

import flashvision

VAR = "FLASHVISION_SCRATCH_AMX_SKIP"
SETTINGS = ["", "8", "2", "1", "4", "6", "5", "3", "7", "15"]
LABELS = {"": "all", "8": "no packing", "2": "no softmax", "1": "no scores", "4": "no P V",
          "6": "scores (+pack)", "5": "softmax (+pack)", "3": "P V (+pack)", "7": "pack, Q, finish",
          "15": "Q, finish"}
CASES = {"vae-mid-512": (1, 1, 4096, 512), "flux-1024": (1, 24, 4608, 128), "sd15-self-16": (2, 8, 256, 160)}
ROUNDS = int(os.environ.get("ROUNDS", "5"))


def timed(fn, target_s):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < target_s and len(times) < 200):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


for name, (b, h, n, d) in CASES.items():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(torch.bfloat16) for _ in range(3))
    res = {s: [] for s in SETTINGS}
    budget = 0.05 if n * n * b * h * d < 1e10 else 0.15
    for r in range(ROUNDS):
        for s in SETTINGS:
            if s:
                os.environ[VAR] = s
            else:
                os.environ.pop(VAR, None)
            res[s].append(timed(lambda: flashvision.attention(q, k, v, layout="bhsd"), budget))
    os.environ.pop(VAR, None)
    full = statistics.median(res[""])
    print(f"{name}")
    for s in SETTINGS:
        m = statistics.median(res[s])
        print(f"  {LABELS[s]:16s} {m * 1e3:8.3f} ms  {m / full * 100:5.1f} % of all  "
              f"rounds {' '.join(f'{x * 1e3:.3f}' for x in res[s])}")
    sys.stdout.flush()
