#!/usr/bin/env bash
# Session 34, call 2. Kits: r (main at 9e3c3d5), t (branch wip/sm90-thin-rows at e3d9104: idle
# consumers and the thin path, turns kept) and i (t without the thin path: only a consumer with no
# rows in its tile skips its GEMMs, keeping the ring's count and its turns). Call 1 lost kit r's
# runs (its package had no extension), so r runs again beside t here.
# 1. The suites the change touches on kit i, sharded.
# 2. The cases with consumers short of rows and controls, flashvision alone, kits r, t, i, i, t, r.
# carry: [".devbin/s34"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-r kit-t kit-i; do tar xJf .devbin/s34/$K.tar.xz -C /tmp || exit 1; done
for K in kit-r kit-t kit-i; do
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-t/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
F='*Sm90ThinRows*:*Sm90WideTiles*:*Sm90KvMulticast*:*FwdSplit*:*Sm90CrossTile*:*Sm90HalfTiles*:*Sm90KeyBlocks*'
pids=()
for i in $(seq 0 9); do
  LD_LIBRARY_PATH=/tmp/kit-i GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=10 GTEST_SHARD_INDEX=$i \
    timeout -k 5 150 /tmp/kit-i/bin/flashvision_gpu_tests > /tmp/sel-$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "job rc=$?"; done
cat /tmp/sel-*.txt > $R/gtests-selected-kit-i.txt
echo "== selected suites kit-i $(el)"; grep -h "^\[  PASSED" /tmp/sel-*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/sel-*.txt | sort -u | head -30
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.25"
CASES="--case vit-l14-336 --case vit-h14-224 --case vit-b16-224 --case dit-xl2-512 --case sd15-self-64 --case sdxl-self-128 --case sd15-self-32 --case flux-1024"
n=0
for K in kit-r kit-t kit-i kit-i kit-t kit-r; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B $CASES --json $R/idle-$n-$K.json > $R/idle-$n-$K.txt 2>&1
  echo "== idle $n $K rc=$? $(el)"
done
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/idle-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    a, b, c = min(v["r"]), min(v["t"]), min(v["i"])
    print(f"{case:16s} r {a:8.4f} t {b:8.4f} i {c:8.4f}  t/r {b / a:6.3f} i/r {c / a:6.3f}  r {[round(x, 4) for x in v['r']]} t {[round(x, 4) for x in v['t']]} i {[round(x, 4) for x in v['i']]}")
PY
echo "$(el) done"; save
