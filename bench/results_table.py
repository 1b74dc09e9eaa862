#!/usr/bin/env python3
"""Prints a markdown table of one results file: flashvision against the SDPA peers of the same run.

Usage: results_table.py RESULTS_JSON

Peers timed by the older peer script carry "fwd" and "bwd" records; their fwd+bwd figure is
computed from the two times with BENCH.md's FLOP count (3.5 x the forward's).
"""
import json
import sys


def flops(r):
    return 4.0 * r["B"] * r["H"] * r["Nq"] * r["Nk"] * r["D"] * (0.5 if r.get("causal") else 1.0)


def main():
    data = json.load(open(sys.argv[1]))
    records = data["records"]
    peers = {}
    for r in records:
        if r["impl"] != "flashvision" and r.get("ms") and "error" not in r:
            peers.setdefault((r["case"], r["pass"]), {})[r["impl"]] = r
    names = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient"]
    print("| case | pass | flashvision (kernel) | FA2 | cuDNN | mem-efficient | vs FA2 | vs best |")
    print("|---|---|---|---|---|---|---|---|")
    for r in records:
        if r["impl"] != "flashvision":
            continue
        case, pass_ = r["case"], r["pass"]
        row = {}
        for name in names:
            if pass_ == "fwd":
                p = peers.get((case, "fwd"), {}).get(name)
                row[name] = p["tflops"] if p else None
            else:
                f = peers.get((case, "fwd"), {}).get(name)
                b = peers.get((case, "bwd"), {}).get(name)
                fb = peers.get((case, "fwd+bwd"), {}).get(name)
                if fb:
                    row[name] = fb["tflops"]
                elif f and b:
                    row[name] = flops(r) * 3.5 / ((f["ms"] + b["ms"]) * 1e-3) / 1e12
                else:
                    row[name] = None
        mine = None if "error" in r else r.get("tflops")
        best = max((v for v in row.values() if v), default=None)
        fmt = lambda v: f"{v:.1f}" if v else "n/a"
        ratio = lambda other: f"{mine / other:.2f}" if mine and other else "n/a"
        label = f"{fmt(mine)} ({r.get('kernel') or '-'})" if mine else "n/a: " + r.get("error", "")[:60]
        print(f"| {case} | {pass_} | {label} | " + " | ".join(fmt(row[n]) for n in names) +
              f" | {ratio(row['sdpa-flash'])} | {ratio(best)} |")


if __name__ == "__main__":
    main()
