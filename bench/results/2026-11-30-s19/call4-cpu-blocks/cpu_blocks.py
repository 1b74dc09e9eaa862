"""CPU AMX forward block sizes (FLASHVISION_CPU_AMX_BLOCKS), alternated in one process: for each
case, R rounds; each round times torch's CPU SDPA and flashvision under every setting (median of
a few calls each). Prints per-setting medians over rounds and the ratio to torch."""
import os, statistics, sys, time, torch, flashvision
import torch.nn.functional as F

CASES = {  # name: (B, H, N, D), settings ("" = the forward's own choice)
    "sd15-self-16": ((2, 8, 256, 160), ["", "32,256", "32,192"]),
    "vit-b16-224": ((256, 12, 197, 64), ["", "128,224", "128,256"]),
    "sd15-self-32": ((2, 8, 1024, 80), ["", "128,256", "64,256", "128,384", "128,512"]),
    "sd15-self-64": ((2, 8, 4096, 40), ["", "128,256", "128,384", "128,512", "64,256"]),
    "sdxl-self-128": ((2, 10, 4096, 64), ["", "128,256", "128,384", "128,512"]),
    "dit-xl2-512": ((16, 16, 1024, 72), ["", "128,256", "128,512"]),
    "flux-1024": ((1, 24, 4608, 128), ["", "128,256", "128,384", "128,512"]),
}
ROUNDS = 7


def timed(fn, target_s):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < target_s and len(times) < 200):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return statistics.median(times)


for name, ((b, h, n, d), settings) in CASES.items():
    if len(sys.argv) > 1 and name not in sys.argv[1:]:
        continue
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    res = {s: [] for s in settings}
    torch_t = []
    budget = 0.05 if n * n * b * h * d < 1e10 else 0.15
    for r in range(ROUNDS):
        os.environ.pop("FLASHVISION_CPU_AMX_BLOCKS", None)
        torch_t.append(timed(lambda: F.scaled_dot_product_attention(q, k, v), budget))
        for s in settings:
            if s:
                os.environ["FLASHVISION_CPU_AMX_BLOCKS"] = s
            else:
                os.environ.pop("FLASHVISION_CPU_AMX_BLOCKS", None)
            out = flashvision.attention(q, k, v, layout="bhsd")
            err = (out.float() - ref).abs().max().item()
            assert err < 0.05, (name, s, err)
            res[s].append(timed(lambda: flashvision.attention(q, k, v, layout="bhsd"), budget))
    tm = statistics.median(torch_t)
    base = statistics.median(res[settings[0]])
    print(f"{name:14s} torch {tm*1e3:8.3f} ms")
    for s in settings:
        m = statistics.median(res[s])
        print(f"  {s or 'default':10s} {m*1e3:8.3f} ms  vs default {base/m:5.3f}x  vs torch {tm/m:5.2f}x  "
              f"rounds {' '.join(f'{x*1e3:.3f}' for x in res[s])}")
    sys.stdout.flush()
