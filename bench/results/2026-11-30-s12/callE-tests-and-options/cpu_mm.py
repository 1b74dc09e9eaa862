# What oneDNN (torch's CPU bf16 matmul, AMX) sustains on the Xeon: the ceiling to compare the AMX
# forward's tile loops (2026-11-30-s12/callB) with.
import time, torch
for threads in (1, 16):
    torch.set_num_threads(threads)
    for m, k, n in ((4096, 4096, 4096), (256, 512, 4096), (64, 128, 4096), (4096, 128, 4096)):
        a = torch.randn(m, k).bfloat16(); b = torch.randn(k, n).bfloat16()
        for _ in range(3): torch.mm(a, b)
        reps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 1.0:
            torch.mm(a, b); reps += 1
        dt = (time.perf_counter() - t0) / reps
        tf = 2 * m * k * n / dt / 1e12
        print(f"threads {threads:2d} bf16 mm {m}x{k}x{n}: {dt*1e3:.3f} ms, {tf:.2f} TFLOP/s, {tf/threads:.2f} per thread", flush=True)
