"""Fixed cost of one CPU call at the process's thread count, flashvision against torch's CPU SDPA
on the same tensors, calls of the two interleaved in rounds ([B, H, N, D] fp32, no grad).

  1x1x16x16: one task, so flashvision runs on one thread (no parallel region to wake);
  1x16x16x16: 16 tasks, 16 threads woken and joined for ~nothing;
  2x8x256x160: sd15-self-16.
For flashvision also the library call alone (_C.forward_described on described tensors, the
output allocated once): the Python wrapper's share is the difference."""
import math, resource, sys, time

import torch
import torch.nn.functional as F

import flashvision
from flashvision import _C
from flashvision.torch import _ops
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads())
print("threads", torch.get_num_threads(), "|", flashvision.describe_devices()[0])
print("libgomp:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "gomp" in l}))


def times_us(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e6)
    return out


for B, H, N, D in ((1, 1, 16, 16), (1, 16, 16, 16), (2, 8, 256, 160)):
    q, k, v = (torch.randn(B, H, N, D) for _ in range(3))
    s = 1 / math.sqrt(D)
    out = torch.empty_like(q)
    d = _ops._describe((q, k, v, out, None, None, None), True)
    calls = {
        "fv sdpa": lambda: fv_sdpa(q, k, v, scale=s),
        "fv _C only": lambda: _C.forward_described(*d[:5], s, False, None, None, 0, 0, 0),
        "torch sdpa": lambda: F.scaled_dot_product_attention(q, k, v, scale=s),
    }
    n = 200 if N < 256 else 50
    got = {name: [] for name in calls}
    faults = {name: 0 for name in calls}
    with torch.no_grad():
        for _ in range(10):  # rounds
            for name, fn in calls.items():
                for _ in range(3):
                    fn()
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                got[name] += times_us(fn, n)
                faults[name] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    for name, ts in got.items():
        ts.sort()
        print(f"{B}x{H}x{N}x{D:<4} {name:11s} median {ts[len(ts) // 2]:9.1f} us  p10 "
              f"{ts[len(ts) // 10]:9.1f}  min {ts[0]:9.1f}  faults/call {faults[name] / len(ts):.2f}")
