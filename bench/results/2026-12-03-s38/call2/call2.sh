#!/usr/bin/env bash
# Session 38, call 2. Kit d: call 1's kit c with Q scaled from 3 key blocks a tile (ViT-L/14 now
# scaled by default). Kit z: d with a row's first key block taken against a max of 0 before its
# own max is known, where Q is scaled and no causal mask applies (wip/sm90-first-at-zero).
# 1. Every GPU gtest on kit z; the scaling suite under memcheck.
# 2. z against d, alternated, three rounds each, one seed.
# 3. Kit z beside cuDNN and FA2 on every case, twice; D = 128 and 256 at N = 4096 and 16384 held
#    for a second with telemetry.
# carry: [".devbin/s38"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
for K in d z; do
  tar xJf .devbin/s38/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
T=/tmp/kit-z/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-z GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-z.txt.gz
echo "== kit-z GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
grep -h "OK \] .*QueryScaling" /tmp/shard*.txt
save
F='Cuda/GpuSm90QueryScaling.RowsLeavingTheAnchorsWindow/bf16:Cuda/GpuSm90QueryScaling.FirstBlocksBelowTheAnchorsFloor/f16'
LD_LIBRARY_PATH=/tmp/kit-z GTEST_FILTER="$F" timeout -k 5 150 compute-sanitizer --tool memcheck $T > $R/memcheck-z.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -2 $R/memcheck-z.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 38"
SHAPES="--case vit-l14-336 --case vit-h14-224 --case sd15-self-32 --case sd15-self-64 --case dit-xl2-512 --case sdxl-self-128 --case sweep-d64-n4096 --case sweep-d128-n4096 --case flux-1024"
n=0
for K in d z z d d z; do
  n=$((n + 1))
  PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/kit-$K timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
for case, v in t.items():
    a, b = min(v["z"]), min(v["d"])
    print(f"{case:20s} z {a:9.2f} d {b:9.2f} us  z/d {a / b:6.3f}  z {[round(x, 1) for x in v['z']]} d {[round(x, 1) for x in v['d']]}")
PY
save
for n in 1 2; do
  PYTHONPATH=/tmp/pkg-z LD_LIBRARY_PATH=/tmp/kit-z timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
    --cuda-graphs --budget 0.2 --json $R/all-gpu-$n.json > $R/all-gpu-$n.txt 2>&1
  echo "== every case, kit z and peers, round $n rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu-$n.txt
  save
done
PYTHONPATH=/tmp/pkg-z LD_LIBRARY_PATH=/tmp/kit-z timeout -k 5 90 $B --telemetry --budget 1.0 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case sweep-d256-n16384 --json $R/tel-z.json > $R/tel-z.txt 2>&1
echo "== telemetry rc=$? $(el)"; tail -12 $R/tel-z.txt
echo "$(el) done"; save
