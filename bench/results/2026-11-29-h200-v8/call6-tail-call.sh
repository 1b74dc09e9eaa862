#!/usr/bin/env bash
# One device call from the repo root of /work/main, with this folder copied to .devbin/sm90-tail:
# the sm90 GPU suites (the split's included) in 8 shards, then the forward bench with the split
# off (0), the model's choice (auto) and forced (1), two interleaved rounds, and a summary table.
set -uo pipefail
B=${B:-.devbin/sm90-tail}
OUT=${OUT:-/tmp/sm90-tail-out}; mkdir -p "$OUT"; S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$S"
t0=$(date +%s)
for i in $(seq 0 7); do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/flashvision_gpu_tests \
    --gtest_filter='*sm90*:*Sm90*' > "$OUT/tests_$i.log" 2>&1 &
done; wait
echo "tests: passed $(grep -h '^\[  PASSED  \]' "$OUT"/tests_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' "$OUT"/tests_*.log | awk '{s+=$3} END {print s+0}') unfinished shards $(grep -L '^\[==========\] [0-9]* tests* from .* ran' "$OUT"/tests_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
grep -h '^\[  FAILED  \] [A-Z]' "$OUT"/tests_*.log | head -20 | tee -a "$S"
C="--case sdxl-self-128 --case flux-1024 --case sd15-self-64 --case sweep-d128-n4096 --case sweep-d64-n4096 --case dit-xl2-512 --case vit-b16-224"
for round in 1 2; do
  for mode in 0 auto; do
    FLASHVISION_SM90_FWD_SPLIT=$mode timeout 200 $B/flashvision bench --device cuda --kernel sm90 \
      --no-naive --budget 0.15 $C --json "$OUT/bench_${mode}_$round.json" \
      > "$OUT/bench_${mode}_$round.log" 2>&1
    echo "bench FLASHVISION_SM90_FWD_SPLIT=$mode round $round rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
  done
done
python3 - "$OUT" <<'PY' | tee -a "$S"
import json, sys, glob, os
out = sys.argv[1]
table = {}
for path in sorted(glob.glob(os.path.join(out, "bench_*_*.json"))):
    mode, rnd = os.path.basename(path)[6:-5].rsplit("_", 1)
    data = json.load(open(path))
    for r in data["records"] if isinstance(data, dict) else data:
        if r.get("impl") == "flashvision" and "/" not in str(r.get("kernel", "")):
            table.setdefault(r["case"], {})[(mode, rnd)] = (r.get("tflops"), r.get("max_err"))
cols = [(m, r) for r in ("1", "2") for m in ("0", "auto")]
print("case".ljust(18) + "".join(f"{m}/{r}".rjust(10) for m, r in cols) + "   max_err(auto/1)")
for case, row in table.items():
    cells = "".join((f"{row[c][0]:.0f}" if c in row and row[c][0] else "-").rjust(10) for c in cols)
    print(case.ljust(18) + cells + "   " + str(row.get(("auto", "1"), (None, None))[1]))
PY
echo "done $(( $(date +%s)-t0 ))s" | tee -a "$S"
