#!/usr/bin/env bash
# Session 41, call 2. Kits (bench/results/2026-12-07-s41/README.md): mf and wf as in call 1, and
#   wp: each step tests, while its P V runs, whether the next step's K and V have landed
#       (mbarrier.test_wait, no wait), and waits at the step's top only where they had not
#       (wip/sm90-early-block-probe); every bucket, with flashvision_gpu_tests.
# 1. mf, wf, wp alternated, three rounds, on the D = 128 cases and six other image cases.
# 2. Every GPU gtest on kit wp, where the call has time left (it did not: see the README).
# carry: [".devbin/s41b"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
cat $R/gpu.txt
for K in mf wf wp; do
  tar xJf .devbin/s41b/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 --seed 41"
S="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048
  --case sweep-d64-n4096 --case sweep-d256-n4096 --case sd15-self-32 --case sd15-self-16 --case vit-l14-336 --case dit-xl2-512"
n=0
for K in mf wf wp wp wf mf mf wf wp; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B $S --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
python3 - $R <<'PY' | tee $R/vs-summary.txt
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
err = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{sys.argv[1]}/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
            err[r["case"]][kit] = r.get("max_err")
for case, v in t.items():
    base = min(v["mf"])
    line = f"{case:20s} mf {base:9.2f} us"
    for k in ("wf", "wp"):
        if v.get(k):
            line += f"  {k}/mf {min(v[k]) / base:6.3f} (err {err[case][k]:.1e})"
    print(line + f"  err mf {err[case]['mf']:.1e}")
    print("    " + "  ".join(f"{k} {[round(x, 1) for x in v[k]]}" for k in ("mf", "wf", "wp") if v.get(k)))
PY
save
T=/tmp/kit-wp/bin/flashvision_gpu_tests
export LD_LIBRARY_PATH=/tmp/kit-wp
left=$(( 200 - ($(date +%s) - t0) ))
if [ $left -gt 60 ]; then
  shards=14; pids=()
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 $left $T >/tmp/shard$i.txt 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
  cat /tmp/shard*.txt | gzip > $R/gtests-wp.txt.gz
  echo "== kit wp GPU gtests $(el)"
  grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
  grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
  grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
fi
echo "$(el) done"; save
