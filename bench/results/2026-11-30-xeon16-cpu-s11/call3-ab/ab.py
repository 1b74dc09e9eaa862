"""Scratch: in one process, our sd15-self-16 forward with FV_MIN_LEFT=1 (main's queue) and unset
(the branch's threshold) alternated in rounds, torch's SDPA between them."""
import os, sys, time, statistics
import torch
import torch.nn.functional as F
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

torch.manual_seed(0)
q, k, v = (torch.randn(2, 8, 256, 160, dtype=torch.bfloat16) for _ in range(3))

def times(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); out.append((time.perf_counter() - t0) * 1e3)
    return out

def with_min_left(value):
    if value is None:
        os.environ.pop("FV_MIN_LEFT", None)
    else:
        os.environ["FV_MIN_LEFT"] = value
    return lambda: fv_sdpa(q, k, v)

th = lambda: F.scaled_dot_product_attention(q, k, v)
med = {"1": [], "auto": [], "torch": []}
for r in range(int(sys.argv[1])):
    order = [("1", "1"), ("auto", None)] if r % 2 == 0 else [("auto", None), ("1", "1")]
    for name, value in order:
        fn = with_min_left(value)
        times(fn, 5)
        med[name].append(statistics.median(times(fn, 150)))
    times(th, 3)
    med["torch"].append(statistics.median(times(th, 100)))
for name, m in med.items():
    print(f"{name}: round medians " + " ".join(f"{x:.3f}" for x in m) +
          f" | median {statistics.median(m):.3f} ms")
ratios = [a / b for a, b in zip(med["1"], med["auto"])]
print("main/branch per round: " + " ".join(f"{x:.3f}" for x in ratios) +
      f" | median {statistics.median(ratios):.3f}")
