#!/usr/bin/env bash
# Session 40, call 1. Kits built for bucket 128 only, both with the diagnostic timelines of branch
# wip/sm90-trace (fwd_trace.cuh, on where FLASHVISION_SM90_TRACE names a file):
#   t: main's kernels plus the timelines;
#   e: t with a unit's epilogue deferred until the next unit's first S = Q K^T is issued
#      (wip/sm90-deferred-epilogue).
# 1. One traced forward of each D = 128 case on each kit (trace_cases.py; analyze_trace.py).
# 2. t and e alternated, three rounds, on the D = 128 cases, untraced.
# carry: [".devbin/s40"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=$OUT/res; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
cat $R/gpu.txt
D=bench/results/2026-12-07-s40/call1
for K in t e; do
  tar xJf .devbin/s40/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
for K in t e; do
  use $K; mkdir -p $R/trace-$K
  timeout -k 5 90 python3 $D/trace_cases.py $R/trace-$K; echo "== traces $K rc=$? $(el)"
  python3 $D/analyze_trace.py $R/trace-$K/*-1.bin > $R/trace-$K.txt 2>&1; gzip $R/trace-$K/*.bin
done
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 40"
SHAPES="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048"
n=0
for K in t e e t t e; do
  n=$((n + 1)); use $K
  timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{sys.argv[1]}/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
for case, v in t.items():
    base = min(v["t"])
    print(f"{case:20s} t {base:9.2f} us  e/t {min(v['e']) / base:6.3f}   t {[round(x, 1) for x in v['t']]}  e {[round(x, 1) for x in v['e']]}")
PY
cat $R/trace-t.txt $R/trace-e.txt
echo "$(el) done"
