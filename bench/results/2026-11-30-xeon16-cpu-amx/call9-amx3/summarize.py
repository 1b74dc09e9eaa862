"""One line per (run, case) of the bench JSONs given: flashvision's and torch's ms, the speedup as
the bench reports it (records.speedup: the median of the rounds' ratios), the spread of the
per-round ratios, flashvision's kernel and its max error against the float64 reference on the
sampled rows (torch's error beside it)."""
import json
import os
import sys

from flashvision.bench.records import speedup

for path in sys.argv[1:]:
    try:
        results = json.load(open(path))
    except (OSError, ValueError) as exc:
        print(f"{os.path.basename(path)}: unreadable ({exc})")
        continue
    recs = results["records"]
    rounds = results["meta"].get("rounds", 1)
    for case in dict.fromkeys(r["case"] for r in recs):
        fv = next((r for r in recs if r["case"] == case and r["impl"] == "flashvision"), None)
        th = next((r for r in recs if r["case"] == case and r["impl"] == "torch-cpu-sdpa"), None)
        if not fv or not th or not fv.get("ms") or not th.get("ms"):
            print(f"{os.path.basename(path):24s} {case:14s} n/a")
            continue
        ratio = speedup(recs, case, "fwd")[0]
        spread = ""
        if fv.get("round_ms") and th.get("round_ms"):
            per = sorted(t / f for t, f in zip(th["round_ms"], fv["round_ms"]))
            spread = f" rounds {per[0]:.2f}-{per[-1]:.2f}x"
        err = f" err {fv.get('max_err', float('nan')):.1e}/{th.get('max_err', float('nan')):.1e}"
        print(f"{os.path.basename(path):24s} {case:14s} fv {fv['ms']:8.3f} ms  torch "
              f"{th['ms']:8.3f} ms  {ratio:.2f}x (R={rounds}){spread}{err} {fv.get('kernel', '')}")
