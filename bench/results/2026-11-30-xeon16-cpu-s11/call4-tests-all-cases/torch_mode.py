"""Scratch: torch's CPU SDPA alone on sd15-self-16 (bf16), flashvision never imported."""
import statistics, time
import torch
import torch.nn.functional as F
q, k, v = (torch.randn(2, 8, 256, 160, dtype=torch.bfloat16) for _ in range(3))
for _ in range(20):
    F.scaled_dot_product_attention(q, k, v)
t = []
for _ in range(300):
    t0 = time.perf_counter(); F.scaled_dot_product_attention(q, k, v); t.append((time.perf_counter() - t0) * 1e3)
print(f"torch alone sd15-self-16 bf16: median {statistics.median(t):.3f} ms", flush=True)
