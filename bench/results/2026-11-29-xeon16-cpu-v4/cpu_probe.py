"""Where flashvision's CPU forward loses time inside a Python process: the op as the bench calls
it, the same with the output preallocated (no fresh pages), torch's SDPA, and the cost of fresh
output pages alone (torch.empty + a parallel write)."""
import sys, time, torch
import flashvision
from flashvision.torch import scaled_dot_product_attention as fv_sdpa
import torch.nn.functional as F

torch.set_num_threads(16)
def med(fn, n=15):
    fn(); fn()
    t = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); t.append((time.perf_counter() - t0) * 1e3)
    t.sort(); return t[len(t) // 2], t[0]
for B, H, N, D in [(128, 16, 257, 80), (2, 8, 1024, 80), (2, 8, 256, 160), (2, 10, 4096, 64)]:
    q, k, v = (torch.randn(B, H, N, D) for _ in range(3))
    fl = 4.0 * B * H * N * N * D
    r = {}
    r["fv-op"] = med(lambda: fv_sdpa(q, k, v))
    r["torch"] = med(lambda: F.scaled_dot_product_attention(q, k, v))
    r["fv-op2"] = med(lambda: fv_sdpa(q, k, v))
    qn, kn, vn = (x.numpy() for x in (q, k, v))
    r["fv-numpy"] = med(lambda: flashvision.attention(qn, kn, vn, layout="bhsd"))
    r["empty+fill"] = med(lambda: torch.empty_like(q).fill_(1.0))
    r["empty+copy"] = med(lambda: q.clone())
    print(f"B{B} H{H} N{N} D{D}: " + "  ".join(f"{k} {m:.3f}/{mn:.3f}ms" for k, (m, mn) in r.items())
          + f"  | fv-op {fl / r['fv-op'][0] * 1e-9:.0f} GF/s torch {fl / r['torch'][0] * 1e-9:.0f}", flush=True)
