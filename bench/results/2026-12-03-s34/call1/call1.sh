#!/usr/bin/env bash
# Session 34, call 1. Kits: r (main at 9e3c3d5), t and t2 (branches wip/sm90-thin-rows and
# wip/sm90-thin-rows-t2). In both, a consumer with no rows in its tile only keeps the ring's count
# and one with 1 to 16 rows takes the thin path on mma.sync, its four warps splitting each key
# block. t: the thin warps fold one 16-key chunk at a time and every consumer keeps taking turns;
# t2: a warp's chunks of a block at once, and no consumer of such a tile takes turns.
# 1. The suites the change touches on kits t and t2, sharded; memcheck and racecheck on the thin
#    rows' tests.
# 2. The cases with consumers short of rows and controls, flashvision alone, kits r, t, t2, t2, t, r.
# carry: [".devbin/s34"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-r kit-t kit-t2; do
  tar xJf .devbin/s34/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-t/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
F='*Sm90ThinRows*:*Sm90WideTiles*:*Sm90KvMulticast*:*FwdSplit*:*Sm90CrossTile*:*Sm90HalfTiles*:*Sm90KeyBlocks*'
pids=()
for K in kit-t kit-t2; do
  for i in 0 1 2 3 4 5; do
    LD_LIBRARY_PATH=/tmp/$K GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i \
      timeout -k 5 170 /tmp/$K/bin/flashvision_gpu_tests > /tmp/sel-$K-$i.txt 2>&1 &
    pids+=($!)
  done
done
THIN='*Sm90ThinRows.VitSequencesWithAClassToken/bf16:*Sm90ThinRows.SplitTilesAndSharedKeys/bf16'
LD_LIBRARY_PATH=/tmp/kit-t2 timeout -k 5 170 compute-sanitizer --tool memcheck /tmp/kit-t2/bin/flashvision_gpu_tests \
  --gtest_filter="$THIN" > $R/memcheck-t2.txt 2>&1 &
pids+=($!)
LD_LIBRARY_PATH=/tmp/kit-t timeout -k 5 170 compute-sanitizer --tool racecheck /tmp/kit-t/bin/flashvision_gpu_tests \
  --gtest_filter='*Sm90ThinRows.VitSequencesWithAClassToken/bf16' > $R/racecheck-t.txt 2>&1 &
pids+=($!)
for p in "${pids[@]}"; do wait "$p" || echo "job rc=$?"; done
for K in kit-t kit-t2; do
  cat /tmp/sel-$K-*.txt > $R/gtests-selected-$K.txt
  echo "== selected suites $K $(el)"; grep -h "^\[  PASSED" /tmp/sel-$K-*.txt | awk '{s+=$4} END {print "passed", s}'
  grep -h "^\[  FAILED" /tmp/sel-$K-*.txt | sort -u | head -30
done
echo "== memcheck t2"; tail -3 $R/memcheck-t2.txt
echo "== racecheck t"; tail -3 $R/racecheck-t.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.25"
CASES="--case vit-l14-336 --case vit-h14-224 --case vit-b16-224 --case dit-xl2-512 --case sd15-self-64 --case sdxl-self-128 --case sd15-self-32 --case flux-1024"
n=0
for K in kit-r kit-t kit-t2 kit-t2 kit-t kit-r; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B $CASES --json $R/thin-$n-$K.json > $R/thin-$n-$K.txt 2>&1
  echo "== thin $n $K rc=$? $(el)"
done
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/thin-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    a, b, c = min(v["r"]), min(v["t"]), min(v["t2"])
    print(f"{case:16s} r {a:8.4f} t {b:8.4f} t2 {c:8.4f}  t/r {b / a:6.3f} t2/r {c / a:6.3f}  r {[round(x, 4) for x in v['r']]} t {[round(x, 4) for x in v['t']]} t2 {[round(x, 4) for x in v['t2']]}")
PY
echo "$(el) done"; save
