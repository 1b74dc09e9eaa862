"""Forward time of flashvision on [B,H,N,D]- and [B,N,H,D]-contiguous tensors, and of cuDNN's
SDPA, timed two ways: triton do_bench (back to back, L2 flushed) and CUDA events with a sync after
each call (as the CLI). Prints TFLOP/s."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench
from flashvision.bench.cases import CASES
from flashvision.torch import scaled_dot_product_attention, flash_attn_func


def synced_ms(fn, reps=30):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


for name in sys.argv[1:]:
    c = CASES[name]
    flops = 4 * c.B * c.H * c.Nq * c.Nk * c.D
    g = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda n: torch.randn((c.B, c.H, n, c.D), device="cuda", dtype=torch.bfloat16, generator=g)
    q, k, v = mk(c.Nq), mk(c.Nk), mk(c.Nk)
    qs, ks, vs = (x.transpose(1, 2).contiguous() for x in (q, k, v))
    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v)
    fns = {"fv bhsd": lambda: scaled_dot_product_attention(q, k, v),
           "fv bshd": lambda: flash_attn_func(qs, ks, vs),
           "cudnn bhsd": cudnn}
    for label, fn in fns.items():
        db = do_bench(fn, warmup=50, rep=200)
        sy = synced_ms(fn)
        print(f"{name:18s} {label:11s} do_bench {flops / db / 1e9:7.1f}  synced {flops / sy / 1e9:7.1f} TFLOP/s", flush=True)
