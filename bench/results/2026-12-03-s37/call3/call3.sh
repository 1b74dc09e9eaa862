#!/usr/bin/env bash
# Session 37, call 3. Kit r: what lands. Kit q's racecheck reported the producer's end-of-loads
# word; kit r has none: the scaling warps walk the schedule's units as the producer does. r0 is
# kit r with FLASHVISION_SM90_FWD_PRESCALE=0.
# 1. Every GPU gtest on kit r; the new suite under racecheck (as kit q's) and memcheck.
# 2. The cases the scaling changes, r and r0 alternated, two rounds each, one seed; D = 256
#    with the scaling forced on and off.
# carry: [".devbin/s37"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s37/kit-r.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-r && cp -r python/flashvision /tmp/pkg-r/ && cp /tmp/kit-r/python/_C*.so /tmp/pkg-r/flashvision/
export PYTHONUNBUFFERED=1
T=/tmp/kit-r/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-r GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-r.txt.gz
echo "== kit-r GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
save
LD_LIBRARY_PATH=/tmp/kit-r GTEST_FILTER='Cuda/GpuSm90QueryScaling.SeveralTilesPerCta/bf16' timeout -k 5 120 compute-sanitizer --tool racecheck $T > $R/racecheck-r.txt 2>&1
echo "== racecheck rc=$? $(el)"; tail -2 $R/racecheck-r.txt
F='Cuda/GpuSm90QueryScaling.SplitClustersAndWideTiles/bf16:Cuda/GpuSm90QueryScaling.CausalGroupedLayoutsVarlenAndScales/f16'
LD_LIBRARY_PATH=/tmp/kit-r GTEST_FILTER="$F" timeout -k 5 150 compute-sanitizer --tool memcheck $T > $R/memcheck-r.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -2 $R/memcheck-r.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 37"
SHAPES="--case sweep-d64-n4096 --case sweep-d128-n16384 --case sdxl-self-128 --case flux-2048 --case sd15-self-32 --case dit-xl2-512"
n=0
for K in r r0 r0 r; do
  n=$((n + 1))
  if [ $K = r0 ]; then export FLASHVISION_SM90_FWD_PRESCALE=0; else unset FLASHVISION_SM90_FWD_PRESCALE; fi
  PYTHONPATH=/tmp/pkg-r LD_LIBRARY_PATH=/tmp/kit-r timeout -k 5 60 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
# D = 256 (auto leaves it unscaled): forced on (r1) against off, two rounds.
for K in r1 r0 r0 r1; do
  n=$((n + 1))
  if [ $K = r0 ]; then export FLASHVISION_SM90_FWD_PRESCALE=0; else export FLASHVISION_SM90_FWD_PRESCALE=1; fi
  PYTHONPATH=/tmp/pkg-r LD_LIBRARY_PATH=/tmp/kit-r timeout -k 5 60 $B --case sweep-d256-n4096 --case sweep-d256-n16384 --json $R/wide-$n-$K.json > $R/wide-$n-$K.txt 2>&1
  echo "== wide $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_PRESCALE
grep -h "flashvision" $R/wide-*.txt
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
for case, v in t.items():
    a, b = min(v["r"]), min(v["r0"])
    print(f"{case:20s} r {a:9.2f} r0 {b:9.2f} us  r/r0 {a / b:6.3f}  r {[round(x, 1) for x in v['r']]} r0 {[round(x, 1) for x in v['r0']]}")
PY
echo "$(el) done"; save
