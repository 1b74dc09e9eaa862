"""Scratch: vae-mid-512 (1x1x4096x4096x512, bf16) with the AMX forward's query block rows forced
by FV_ROWS (unset = the rule: 32 here), alternated in rounds in one process, torch between."""
import os, statistics, time
import torch
import torch.nn.functional as F
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

torch.manual_seed(0)
q, k, v = (torch.randn(1, 1, 4096, 512, dtype=torch.bfloat16) for _ in range(3))
ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())

def times(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); out.append((time.perf_counter() - t0) * 1e3)
    return out

settings = ["rule", "64", "128"]
med = {s: [] for s in settings + ["torch"]}
for r in range(6):
    for s in (settings if r % 2 == 0 else settings[::-1]):
        if s == "rule":
            os.environ.pop("FV_ROWS", None)
        else:
            os.environ["FV_ROWS"] = s
        err = float((fv_sdpa(q, k, v).double() - ref).abs().max())
        assert err < 2e-2, (s, err)
        med[s].append(statistics.median(times(lambda: fv_sdpa(q, k, v), 30)))
    times(lambda: F.scaled_dot_product_attention(q, k, v), 2)
    med["torch"].append(statistics.median(times(lambda: F.scaled_dot_product_attention(q, k, v), 15)))
for s, m in med.items():
    print(f"{s}: " + " ".join(f"{x:.3f}" for x in m) + f" | median {statistics.median(m):.3f} ms")
