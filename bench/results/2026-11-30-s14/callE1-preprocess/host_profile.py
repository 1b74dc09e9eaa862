"""Session 14: the host's time per call of flashvision and FA2 (SDPA) on sdxl-cross, forward alone
and forward+backward (no sync inside the loop, so the GPU never holds the host back), and a
cProfile of flashvision's fwd+bwd by own time: where the host's time goes."""
import cProfile
import pstats
import time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashvision.torch as fvt

b, h, nq, nk, d = 2, 10, 4096, 77, 64
g = torch.Generator(device="cuda").manual_seed(0)
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
           .requires_grad_() for n in (nq, nk, nk))
dout = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16, generator=g)


def fa2(q, k, v):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v)


def fwd(fn):
    with torch.no_grad():
        fn(q, k, v)


def fwd_bwd(fn):
    torch.autograd.grad(fn(q, k, v), (q, k, v), dout)


def host_us(step, fn, n=200):
    for _ in range(10):
        step(fn)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step(fn)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


for rnd in range(2):
    for name, fn in (("flashvision", fvt.scaled_dot_product_attention), ("fa2", fa2)):
        print(f"round {rnd} {name}: fwd {host_us(fwd, fn):.1f} us, fwd+bwd "
              f"{host_us(fwd_bwd, fn):.1f} us host per call")
profiler = cProfile.Profile()
profiler.enable()
for _ in range(300):
    fwd_bwd(fvt.scaled_dot_product_attention)
profiler.disable()
torch.cuda.synchronize()
pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
