"""Stall summary of an ncu SASS source page (CSV): shares of every stall column over the kernel
and the hottest instructions with their top stall reasons. Usage: stalls.py FILE.sass.csv [N]"""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
head_i = next(i for i, r in enumerate(rows) if "Source" in r)
head = rows[head_i]
data = rows[head_i + 1:]
src = head.index("Source")
total_col = head.index("Warp Stall Sampling (All Samples)")
num = lambda r, i: int(r[i]) if i < len(r) and r[i].strip().isdigit() else 0
stall_cols = [i for i, h in enumerate(head) if h.startswith("stall_")]
total = sum(num(r, total_col) for r in data)
print(sys.argv[1], "samples", total)
shares = sorted(((sum(num(r, i) for r in data), head[i]) for i in stall_cols), reverse=True)
print("  " + ", ".join(f"{n} {100 * s / max(total, 1):.1f}" for s, n in shares[:12]))
order = sorted(range(len(data)), key=lambda k: -num(data[k], total_col))[:top_n]
for k in order:
    r = data[k]
    reasons = sorted(((num(r, i), head[i]) for i in stall_cols), reverse=True)[:3]
    why = " ".join(f"{n}:{v}" for v, n in reasons if v)
    print(f"{k:6d} {num(r, total_col):7d} {100 * num(r, total_col) / max(total, 1):5.1f}%  "
          f"{r[src].strip()[:70]:70s} {why}")
