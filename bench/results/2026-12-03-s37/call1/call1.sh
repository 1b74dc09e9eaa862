#!/usr/bin/env bash
# Session 37, call 1. Kit p: Q scaled by scale * log2(e) in shared memory by the producer
# warpgroup's idle warps, and a softmax fast path without the FFMA for warps whose rows are
# anchored at a max of 0 (branch wip/sm90-q-prescale). FLASHVISION_SM90_FWD_PRESCALE picks it:
# auto (kit p: tiles of 4 key blocks or more), 0 (p0: main's arithmetic), 1 (p1: wherever the
# scale allows).
# 1. The long and image cases, p, p0, p1 alternated (three rounds of p and p0), one seed.
# 2. Every GPU gtest with the prescale forced on (which tests its arithmetic fails).
# carry: [".devbin/s37"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s37/kit-p.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-p && cp -r python/flashvision /tmp/pkg-p/ && cp /tmp/kit-p/python/_C*.so /tmp/pkg-p/flashvision/
export PYTHONUNBUFFERED=1
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 37"
SHAPES="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case sdxl-self-128 --case flux-1024 --case flux-2048 --case sd15-self-64 --case sd15-self-32 --case dit-xl2-512 --case vit-l14-336"
n=0
for K in p p0 p1 p0 p p p0; do
  n=$((n + 1))
  case $K in p) export FLASHVISION_SM90_FWD_PRESCALE=auto;; p0) export FLASHVISION_SM90_FWD_PRESCALE=0;; p1) export FLASHVISION_SM90_FWD_PRESCALE=1;; esac
  PYTHONPATH=/tmp/pkg-p LD_LIBRARY_PATH=/tmp/kit-p timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_PRESCALE
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
err = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
            err[r["case"]][kit] = r.get("max_err")
for case, v in t.items():
    a, b, c = min(v["p"]), min(v["p0"]), min(v["p1"])
    print(f"{case:20s} p {a:9.2f} p0 {b:9.2f} p1 {c:9.2f} us  p/p0 {a / b:6.3f} p1/p0 {c / b:6.3f}  p {[round(x, 1) for x in v['p']]} p0 {[round(x, 1) for x in v['p0']]}  err p {err[case].get('p')} p0 {err[case].get('p0')} p1 {err[case].get('p1')}")
PY
T=/tmp/kit-p/bin/flashvision_gpu_tests
export FLASHVISION_SM90_FWD_PRESCALE=1
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-p GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
unset FLASHVISION_SM90_FWD_PRESCALE
cat /tmp/shard*.txt | gzip > $R/gtests-p1.txt.gz
echo "== kit-p GPU gtests, prescale forced $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -60
echo "$(el) done"; save
