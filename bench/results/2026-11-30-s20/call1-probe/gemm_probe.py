"""Scratch probe (session 20): what bf16 matmuls reach through torch (oneDNN, AMX) on the device's
Xeon, at vae-mid-512's shapes, beside torch's CPU SDPA and flashvision on that case."""
import time

import torch
import torch.nn.functional as F

import flashvision.torch


def best_ms(fn, reps=7):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


torch.manual_seed(0)
all_threads = torch.get_num_threads()
for threads in (all_threads, 1):
    torch.set_num_threads(threads)
    for m, k, n in ((4096, 512, 4096), (4096, 4096, 512), (4096, 4096, 4096), (1024, 512, 1024)):
        a = torch.randn(m, k, dtype=torch.bfloat16)
        b = torch.randn(k, n, dtype=torch.bfloat16)
        if threads == 1 and m * n * k > 2**33:
            continue
        ms = best_ms(lambda: torch.mm(a, b))
        tf = 2 * m * n * k / ms / 1e9
        print(f"threads {threads:2d} mm {m}x{k} @ {k}x{n}: {ms:8.3f} ms  {tf:6.2f} TFLOP/s  {tf / threads:5.3f} a thread")
torch.set_num_threads(all_threads)
q, k, v = (torch.randn(1, 1, 4096, 512, dtype=torch.bfloat16) for _ in range(3))
flop = 4 * 4096 * 4096 * 512
for rnd in range(3):
    t_torch = best_ms(lambda: F.scaled_dot_product_attention(q, k, v))
    t_fv = best_ms(lambda: flashvision.torch.scaled_dot_product_attention(q, k, v))
    print(f"round {rnd}: vae-mid-512 torch sdpa {t_torch:.3f} ms ({flop / t_torch / 1e9:.2f} TFLOP/s), "
          f"flashvision {t_fv:.3f} ms ({flop / t_fv / 1e9:.2f}), ratio {t_torch / t_fv:.2f}x")
