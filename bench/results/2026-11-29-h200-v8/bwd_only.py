#!/usr/bin/env python3
"""Backward-only TFLOP/s per case from flashvision bench JSON files: 2.5 x forward FLOPs over
(fwd+bwd time - fwd time), as the brief's figures. Usage: bwd_only.py label=file.json ..."""
import json
import sys

rows = {}
labels = []
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    labels.append(label)
    try:
        records = json.load(open(path))["records"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{label}: unreadable ({e})")
        continue
    by = {}
    for r in records:
        if r.get("impl") == "flashvision" and "ms" in r:
            by[(r["case"], r["pass"])] = r
    for (case, pss), r in by.items():
        if pss != "fwd+bwd" or (case, "fwd") not in by:
            continue
        f = by[(case, "fwd")]
        fwd_flops = f["tflops"] * f["ms"]  # TFLOP/s * ms = GFLOP
        bwd_ms = r["ms"] - f["ms"]
        bwd = 2.5 * fwd_flops / bwd_ms if bwd_ms > 0 else float("nan")
        err = max((r.get(k) or 0) for k in ("max_err_dq", "max_err_dk", "max_err_dv", "max_err"))
        rows.setdefault(case, {})[label] = (bwd, r["tflops"], r["kernel"], err)
print(f"{'case':24s}" + "".join(f"{l:>22s}" for l in labels))
for case, by_label in rows.items():
    line = f"{case:24s}"
    for l in labels:
        v = by_label.get(l)
        line += f"{'-':>22s}" if v is None else f"{v[0]:8.1f} ({v[1]:6.1f} fb)  "
    print(line)
print("kernels / max grad err:", {c: {l: (v[2], f"{v[3]:.2e}") for l, v in b.items()} for c, b in rows.items()})
