"""fp32 matmul ceiling of the device's CPU (torch.mm, MKL/oneDNN) at 1 and 16 threads."""
import time, torch
for thr in (1, 16):
    torch.set_num_threads(thr)
    for n, k in [(1024, 64), (1024, 1024), (2048, 2048)]:
        a = torch.randn(n * (4 if thr == 16 else 1), k); b = torch.randn(k, n)
        for _ in range(3): torch.mm(a, b)
        t = []
        for _ in range(10):
            t0 = time.perf_counter(); torch.mm(a, b); t.append(time.perf_counter() - t0)
        t.sort(); fl = 2.0 * a.shape[0] * k * n
        print(f"mm t{thr} {a.shape[0]}x{k}x{n}: {fl / t[len(t)//2] * 1e-9:.0f} GF/s (best {fl / t[0] * 1e-9:.0f})", flush=True)
