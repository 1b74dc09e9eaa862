"""Scratch probe: our CPU forward and torch's SDPA on sd15-self-16 (bf16) alone and interleaved."""
import os, sys, time, statistics
import torch
import torch.nn.functional as F
import flashvision
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

mode = sys.argv[1]
torch.manual_seed(0)
q, k, v = (torch.randn(2, 8, 256, 160, dtype=torch.bfloat16) for _ in range(3))
fv = lambda: fv_sdpa(q, k, v)
th = lambda: F.scaled_dot_product_attention(q, k, v)

def times(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); out.append((time.perf_counter() - t0) * 1e3)
    return out

def summary(name, t):
    s = sorted(t)
    print(f"{name}: n {len(t)} median {statistics.median(t):.3f} p10 {s[len(s)//10]:.3f} p90 {s[9*len(s)//10]:.3f} ms", flush=True)

if mode == "maps":
    fv(); th()
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "gomp" in l or "iomp" in l})
    print("omp runtimes loaded:", libs)
    print("torch threads", torch.get_num_threads(), torch.__config__.parallel_info())
elif mode == "alone":
    for name, fn in (("fv", fv), ("torch", th), ("fv", fv), ("torch", th)):
        times(fn, 30); summary(name + " alone", times(fn, 400))
elif mode == "interleaved":
    for r in range(4):
        for name, fn in (("torch", th), ("fv", fv)):
            t = times(fn, 200)
            print(f"round {r} {name}: first5 " + " ".join(f"{x:.3f}" for x in t[:5]), end="; ")
            summary("", t[5:])
elif mode == "sleep-gap":
    # ours after the process slept (pool threads asleep) vs back to back
    for gap in (0.0, 0.001, 0.01, 0.05):
        t = []
        for _ in range(60):
            if gap: time.sleep(gap)
            t0 = time.perf_counter(); fv(); t.append((time.perf_counter() - t0) * 1e3)
        summary(f"fv after sleep {gap*1e3:.0f} ms", t)
