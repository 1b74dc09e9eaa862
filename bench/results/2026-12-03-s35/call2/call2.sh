#!/usr/bin/env bash
# Session 35, call 2. Kit n2: kit n (branch wip/sm90-narrow-first) with the narrow-first suite's
# key lengths mended (call 1's failures were the test's own: bucket 64's short width serves 513 to
# 624 keys only, so no length put one key in its last block); n20 is kit n2 run with
# FLASHVISION_SM90_FWD_NARROW_FIRST=0.
# 1. The suites of the forward's tiles on kit n2, sharded; the narrow-first suite under memcheck.
# 2. The cases the narrow block serves (ViT-L/14, ViT-H/14, D = 128 at N = 4096 and 16384),
#    kits n2, n20 alternated, three rounds each.
# carry: [".devbin/s35"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35/kit-n2.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-n2/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/kit-n2
T=/tmp/kit-n2/bin/flashvision_gpu_tests
F='*Sm90NarrowFirst*:*Sm90ShortTiles*:*Sm90KeyBlock*:*Sm90WideTiles*:*Sm90HalfTiles*:*Sm90CrossTile*'
pids=()
for i in $(seq 0 9); do
  GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=10 GTEST_SHARD_INDEX=$i timeout -k 5 150 $T > /tmp/sel-$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/sel-*.txt > $R/gtests-tiles-n2.txt
echo "== tile suites kit-n2 $(el)"; grep -h "^\[  PASSED" /tmp/sel-*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/sel-*.txt | sort -u | head -20
grep -h "OK \] .*NarrowFirst" /tmp/sel-*.txt
save
GTEST_FILTER='Cuda/GpuSm90NarrowFirst.*/bf16' timeout -k 5 200 \
  compute-sanitizer --tool memcheck $T > $R/memcheck-n2.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-n2.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3"
CASES="--case vit-l14-336 --case vit-h14-224 --case sweep-d128-n4096 --case sweep-d128-n16384"
n=0
for K in n2 n20 n20 n2 n2 n20; do
  n=$((n + 1))
  if [ $K = n20 ]; then export FLASHVISION_SM90_FWD_NARROW_FIRST=0; else unset FLASHVISION_SM90_FWD_NARROW_FIRST; fi
  timeout -k 5 60 $B $CASES --json $R/nf-$n-$K.json > $R/nf-$n-$K.txt 2>&1
  echo "== nf $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_NARROW_FIRST
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/nf-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    a, b = min(v["n2"]), min(v["n20"])
    print(f"{case:18s} n2 {a:8.4f} n20 {b:8.4f}  n2/n20 {a / b:6.3f}  n2 {[round(x, 4) for x in v['n2']]} n20 {[round(x, 4) for x in v['n20']]}")
PY
echo "$(el) done"; save
