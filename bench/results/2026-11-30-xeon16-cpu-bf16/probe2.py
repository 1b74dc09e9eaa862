"""Session 9 probe: is torch's CPU SDPA slower inside the bench process than alone, and why?
Phases (one process): A torch alone; B after importing flashvision; C after flashvision ran one
forward; D after flashvision ran many forwards; E torch again after sleeping 1 s."""
import sys, time, os
import torch, torch.nn.functional as F
CASES = {"sd15-self-16": (2, 8, 256, 160), "sd15-self-32": (2, 8, 1024, 80),
         "sdxl-self-128": (2, 10, 4096, 64), "dit-xl2-512": (16, 16, 1024, 72)}
torch.set_num_threads(len(os.sched_getaffinity(0)))
inputs = {n: [torch.randn(*s, dtype=torch.bfloat16) for _ in range(3)] for n, s in CASES.items()}
def t_torch(n, reps=None):
    q, k, v = inputs[n]
    F.scaled_dot_product_attention(q, k, v)
    reps = reps or (5 if n.startswith("sdxl") or n.startswith("dit") else 30)
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); F.scaled_dot_product_attention(q, k, v); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts) // 2] * 1e3
def t_fv(n, reps=None):
    import flashvision
    from flashvision.torch import scaled_dot_product_attention as fsdpa
    q, k, v = inputs[n]
    fsdpa(q, k, v)
    reps = reps or (5 if n.startswith("sdxl") or n.startswith("dit") else 30)
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fsdpa(q, k, v); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts) // 2] * 1e3
def row(tag, f):
    print(tag.ljust(28), " ".join(f"{n}={f(n):8.3f}" for n in CASES), flush=True)
row("A torch alone", t_torch)
row("A torch alone again", t_torch)
import flashvision
row("B torch after import fv", t_torch)
row("C fv", t_fv)
row("C torch after fv", t_torch)
for n in CASES:  # interleave per case, as the bench does
    a = t_fv(n); b = t_torch(n); c = t_fv(n); d = t_torch(n)
    print(f"D interleaved {n}: fv {a:.3f} torch {b:.3f} fv {c:.3f} torch {d:.3f}", flush=True)
time.sleep(1)
row("E torch after sleep", t_torch)
import ctypes
print("libgomp maps:", sorted({l.split()[-1] for l in open('/proc/self/maps') if 'gomp' in l or 'iomp' in l}))
print("OMP env:", {k: v for k, v in os.environ.items() if 'OMP' in k or 'KMP' in k})
