"""Per-kernel GPU time of flashvision's forward on a few long cases, from torch.profiler: how much
of a call the Hopper forward kernel takes and how much the key norm pass before it (session 21's
bounded softmax), so that kits can be compared kernel by kernel rather than call by call."""
import collections
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import flashvision.torch  # noqa: F401
from flashvision.bench import cases as case_lib
from flashvision.bench import impls as impl_lib


def kernel_times(name, calls=20):
    c = case_lib.CASES[name]
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(c.B, c.H, n, c.D, device="cuda", dtype=torch.bfloat16, generator=gen)
               for n in (c.Nq, c.Nk, c.Nk))
    fn = impl_lib.forward_fn("flashvision", c.D**-0.5)
    for _ in range(3):
        fn(q, k, v)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(q, k, v)
        torch.cuda.synchronize()
    totals = collections.defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] += event.device_time_total / calls
    for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{name:18s} {us:10.1f} us  {kernel[:110]}")


if __name__ == "__main__":
    for case in sys.argv[1:]:
        kernel_times(case)
