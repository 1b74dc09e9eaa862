"""Session 36, call 5: would a last partial wave of smaller tiles pay for one-key-block problems?

SD 1.5's cross-attention (2 x 8 heads, 4096 queries, 77 keys, D = 40) runs 352 tiles of 192 rows
on 132 SMs: two full waves and one of 88 tiles. Its heads 0-5 in 192-row tiles are exactly two
waves (264 tiles) and heads 6-7 in 128-row tiles one wave of 128. SDXL's (2 x 10 heads, D = 64):
heads 0-8 are three waves of 192-row tiles, head 9 64 tiles of 128 rows. This times, in CUDA
graphs as the benchmark does, one call against two calls on head slices (each with its own
output, FLASHVISION_SM90_FWD_ROWS set around each call at capture), no programmatic launch."""
import os
import sys

import torch

import flashvision
from flashvision.bench import timing

torch.manual_seed(36)
BUDGET = 0.3


def make(batch, heads, dim):
    q = torch.randn(batch, 4096, heads, dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, 77, heads, dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(batch, 77, heads, dim, device="cuda", dtype=torch.bfloat16)
    return q, k, v


def call(q, k, v, rows=None):
    if rows is None:
        os.environ.pop("FLASHVISION_SM90_FWD_ROWS", None)
    else:
        os.environ["FLASHVISION_SM90_FWD_ROWS"] = rows
    try:
        return flashvision.attention(q, k, v)
    finally:
        os.environ.pop("FLASHVISION_SM90_FWD_ROWS", None)


def variants(q, k, v, first):
    return {
        "one-auto": lambda: call(q, k, v),
        "one-128": lambda: call(q, k, v, "128"),
        "one-192": lambda: call(q, k, v, "192"),
        "two-192+128": lambda: (call(q[:, :, :first], k[:, :, :first], v[:, :, :first], "192"),
                                call(q[:, :, first:], k[:, :, first:], v[:, :, first:], "128")),
        "two-192+192": lambda: (call(q[:, :, :first], k[:, :, :first], v[:, :, :first], "192"),
                                call(q[:, :, first:], k[:, :, first:], v[:, :, first:], "192")),
    }


def main():
    cases = {"sd15-cross": (2, 8, 40, 6), "sdxl-cross": (2, 10, 64, 9)}
    for name, (batch, heads, dim, first) in cases.items():
        q, k, v = make(batch, heads, dim)
        ref = call(q, k, v)
        fns = variants(q, k, v, first)
        two = fns["two-192+128"]()
        err = max((torch.cat([two[0], two[1]], dim=2) - ref).abs().max().item(), 0.0)
        replays = {key: timing.graph_capture(fn)[0] for key, fn in fns.items()}
        times = {key: [] for key in fns}
        for _ in range(3):
            for key, replay in replays.items():
                times[key].append(timing.cuda_ms(replay, BUDGET)[0] * 1e3)
        base = min(times["one-auto"])
        for key, ts in times.items():
            print(f"{name:11s} {key:12s} best {min(ts):7.2f} us  /one-auto {min(ts) / base:6.3f}"
                  f"  {[round(t, 2) for t in ts]}")
        print(f"{name:11s} two-192+128 against one-auto: max |diff| {err:.2e}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
