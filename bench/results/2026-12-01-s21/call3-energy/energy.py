"""Rate, SM clock and board power of the bf16 matmul and of each attention forward, held for a few
seconds each, in one process: nvidia-smi logs clocks, power and clock-event reasons every 50 ms
while every measurement records its wall-clock window, and each window's samples (its first
second left out, while the clock settles) give the measurement's mean clock and power. Energy per
FLOP = power / rate. The figures say whether the GPU is held at its power limit and how many
joules each implementation spends per FLOP there."""
import datetime
import json
import subprocess
import sys
import time

import torch

import flashvision.torch  # noqa: F401  (registers the op the impl calls)
from flashvision.bench import cases as case_lib
from flashvision.bench import impls as impl_lib

HOLD_S = 4.0
SETTLE_S = 1.0
QUERY = "timestamp,clocks.sm,power.draw,clocks_event_reasons.active"


def held(fn, flop):
    """Calls fn back to back for HOLD_S seconds; (TFLOP/s over the last HOLD_S - SETTLE_S, window)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.time()
    while time.time() - t0 < SETTLE_S:
        fn()
        torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    w0 = time.time()
    start.record()
    calls = 0
    while time.time() - w0 < HOLD_S - SETTLE_S:
        for _ in range(4):
            fn()
        calls += 4
        torch.cuda.synchronize()
    end.record()
    end.synchronize()
    return flop * calls / (start.elapsed_time(end) / 1e3) / 1e12, (w0, time.time())


def samples(path):
    out = []
    for line in open(path):
        p = [x.strip() for x in line.split(",")]
        if len(p) < 4:
            continue
        t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f")
        t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
        out.append((t, float(p[1].split()[0]), float(p[2].split()[0]), p[3]))
    return out


def main(log_path, json_path, names):
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader",
                            "-lms", "50"], stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    time.sleep(1.0)
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16, generator=gen)
    rate, window = held(lambda: a @ b, 2 * 8192**3)
    rows.append({"case": "matmul-8192", "impl": "torch.mm", "tflops": rate, "window": window})
    del a, b
    for name in names:
        c = case_lib.CASES[name]
        q = torch.randn(c.B, c.H, c.Nq, c.D, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(c.B, c.H, c.Nk, c.D, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(c.B, c.H, c.Nk, c.D, device="cuda", dtype=torch.bfloat16, generator=gen)
        flop = 4 * c.B * c.H * c.Nq * c.Nk * c.D
        for impl in ("flashvision", "sdpa-cudnn", "sdpa-flash"):
            fn = impl_lib.forward_fn(impl, c.D**-0.5)
            rate, window = held(lambda: fn(q, k, v), flop)
            rows.append({"case": name, "impl": impl, "tflops": rate, "window": window})
            print(f"{name} {impl} {rate:.1f}", flush=True)
    time.sleep(0.3)
    smi.terminate()
    smi.wait()
    log = samples(log_path)
    print(f"{'case':18s} {'impl':12s} {'TFLOP/s':>8s} {'MHz':>6s} {'W':>6s} {'pJ/FLOP':>8s} "
          f"{'TFLOP/s/GHz':>11s} reasons")
    for r in rows:
        w0, w1 = r["window"]
        inside = [s for s in log if w0 <= s[0] <= w1]
        r["samples"] = len(inside)
        r["mhz"] = sum(s[1] for s in inside) / max(len(inside), 1)
        r["watts"] = sum(s[2] for s in inside) / max(len(inside), 1)
        r["reasons"] = sorted({s[3] for s in inside})
        r["pj_per_flop"] = r["watts"] / r["tflops"]
        print(f"{r['case']:18s} {r['impl']:12s} {r['tflops']:8.1f} {r['mhz']:6.0f} "
              f"{r['watts']:6.0f} {r['pj_per_flop']:8.3f} {r['tflops'] / r['mhz'] * 1e3:11.1f} "
              f"{','.join(r['reasons'])}")
    json.dump({"meta": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                        "hold_s": HOLD_S, "settle_s": SETTLE_S, "command": " ".join(sys.argv)},
               "records": rows}, open(json_path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
