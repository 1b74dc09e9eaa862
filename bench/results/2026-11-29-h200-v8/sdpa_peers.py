#!/usr/bin/env python3
"""Times PyTorch's attention backends on the BENCH.md cases (the peers flashvision is judged by).

For every case: SDPA under sdpa_kernel(...) for FLASH_ATTENTION (FlashAttention-2 kernels),
CUDNN_ATTENTION, EFFICIENT_ATTENTION and MATH, plus a naive softmax(q k^T * scale) v. bf16 random
normal inputs in SDPA's [B, H, N, D] layout; median time with CUDA events after warm-up; inputs
rotated among several sets when one set fits in L2. A backend that rejects a shape (or runs out
of memory) is recorded with "error". Writes the results JSON of BENCH.md.

usage: sdpa_peers.py [--json FILE] [--case NAME ...] [--impl NAME ...] [--backward] [--budget S]
"""
import argparse
import datetime
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# name: (B, H, Nq, Nk, D), as in BENCH.md.
CASES = {}
for _d in (64, 128, 256):
    for _n in (1024, 4096, 16384):
        CASES[f"sweep-d{_d}-n{_n}"] = (16384 // _n, 2048 // _d, _n, _n, _d)
CASES.update({
    "vit-b16-224": (256, 12, 197, 197, 64),
    "vit-l14-336": (64, 16, 577, 577, 64),
    "vit-h14-224": (128, 16, 257, 257, 80),
    "sd15-self-64": (2, 8, 4096, 4096, 40),
    "sd15-cross-64": (2, 8, 4096, 77, 40),
    "sd15-self-32": (2, 8, 1024, 1024, 80),
    "sd15-self-16": (2, 8, 256, 256, 160),
    "sdxl-self-128": (2, 10, 4096, 4096, 64),
    "sdxl-cross": (2, 10, 4096, 77, 64),
    "dit-xl2-512": (16, 16, 1024, 1024, 72),
    "flux-1024": (1, 24, 4608, 4608, 128),
    "flux-2048": (1, 24, 16896, 16896, 128),
    "video-49f-720p": (1, 24, 32760, 32760, 128),
    "vae-mid-512": (1, 1, 4096, 4096, 512),
})
FWD_ONLY = {"video-49f-720p"}
L2_BYTES = 60 << 20

BACKENDS = {
    "sdpa-flash": SDPBackend.FLASH_ATTENTION,
    "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
    "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa-math": SDPBackend.MATH,
}


def naive(q, k, v, scale):
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(s.float(), dim=-1).to(q.dtype), v)


def median_ms(fn, budget_s, max_repeat=50):
    """Median of CUDA-event timings of fn() after warm-up, within a time budget."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    start_wall = time.time()
    while len(times) < max_repeat and (len(times) < 3 or time.time() - start_wall < budget_s):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def run_case(name, shape, impl, pass_, budget_s):
    B, H, Nq, Nk, D = shape
    record = {"case": name, "B": B, "H": H, "Hkv": H, "Nq": Nq, "Nk": Nk, "D": D, "dtype": "bf16",
              "causal": False, "device": "cuda", "impl": impl, "pass": pass_}
    flops = 4.0 * B * H * Nq * Nk * D * {"fwd": 1.0, "bwd": 2.5, "fwd+bwd": 3.5}[pass_]
    set_bytes = 2 * (2 * B * H * Nq * D + 2 * B * H * Nk * D)
    sets = max(1, min(8, math.ceil(4 * L2_BYTES / set_bytes)))
    scale = 1.0 / math.sqrt(D)
    try:
        torch.cuda.empty_cache()
        inputs = []
        for _ in range(sets):
            q = torch.randn(B, H, Nq, D, device="cuda", dtype=torch.bfloat16, requires_grad=pass_ != "fwd")
            k = torch.randn(B, H, Nk, D, device="cuda", dtype=torch.bfloat16, requires_grad=pass_ != "fwd")
            v = torch.randn(B, H, Nk, D, device="cuda", dtype=torch.bfloat16, requires_grad=pass_ != "fwd")
            inputs.append((q, k, v, torch.randn(B, H, Nq, D, device="cuda", dtype=torch.bfloat16)))
        counter = [0]

        def forward(q, k, v):
            if impl == "naive":
                return naive(q, k, v, scale)
            with sdpa_kernel(BACKENDS[impl]):
                return F.scaled_dot_product_attention(q, k, v, scale=scale)

        outs = [forward(q, k, v) for q, k, v, _ in inputs] if pass_ == "bwd" else None

        def call():
            i = counter[0] % sets
            counter[0] += 1
            q, k, v, dout = inputs[i]
            if pass_ == "bwd":  # the backward alone, on a retained graph
                with sdpa_kernel(BACKENDS.get(impl, SDPBackend.MATH)):
                    return torch.autograd.grad(outs[i], (q, k, v), dout, retain_graph=True)
            out = forward(q, k, v)
            if pass_ == "fwd+bwd":
                torch.autograd.grad(out, (q, k, v), dout)
            return out

        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad() if pass_ == "fwd" else torch.enable_grad():
            call()
            torch.cuda.synchronize()
            record["peak_bytes"] = int(torch.cuda.max_memory_allocated() - base)
            if pass_ == "fwd":
                with torch.no_grad():
                    ms = median_ms(call, budget_s)
            else:
                ms = median_ms(call, budget_s)
        record["ms"] = ms
        record["tflops"] = flops / (ms * 1e-3) / 1e12
    except Exception as exc:  # a backend that rejects the shape or runs out of memory: n/a
        record["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        torch.cuda.synchronize()
    finally:
        inputs = outs = None
        torch.cuda.empty_cache()
    return record


def git_commit():
    try:
        return subprocess.check_output(["git", "rev-parse", "HEAD"], stderr=subprocess.DEVNULL,
                                       cwd=os.path.dirname(os.path.abspath(__file__))).decode().strip()
    except Exception:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, help="results file (BENCH.md format)")
    parser.add_argument("--case", action="append", help="case name (repeatable); default: all")
    parser.add_argument("--impl", action="append", help="naive, sdpa-flash, sdpa-cudnn, sdpa-efficient, sdpa-math")
    parser.add_argument("--backward", action="store_true", help="also time the backward pass alone")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per measurement")
    args = parser.parse_args()
    names = args.case or list(CASES)
    impls = args.impl or ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "sdpa-math", "naive"]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": socket.gethostname(), "gpu": torch.cuda.get_device_name(0),
            "driver": None, "cuda": torch.version.cuda, "torch": torch.__version__,
            "cudnn": str(torch.backends.cudnn.version()), "commit": git_commit(),
            "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "python": platform.python_version()}
    try:
        meta["driver"] = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).decode().split()[0]
    except Exception:
        pass
    records = []
    print(f"{'case':<18} {'impl':<15} {'pass':<8} {'ms':>9} {'TFLOP/s':>8}")
    for name in names:
        passes = ["fwd"] + (["bwd"] if args.backward and name not in FWD_ONLY else [])
        for impl in impls:
            for pass_ in passes:
                rec = run_case(name, CASES[name], impl, pass_, args.budget)
                records.append(rec)
                if "error" in rec:
                    print(f"{name:<18} {impl:<15} {pass_:<8} {'n/a':>9} {'':>8}  {rec['error'][:60]}")
                else:
                    print(f"{name:<18} {impl:<15} {pass_:<8} {rec['ms']:9.3f} {rec['tflops']:8.1f}")
                sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "records": records}, f, indent=1)


if __name__ == "__main__":
    main()
