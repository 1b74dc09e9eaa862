#!/usr/bin/env bash
# Session 38, call 1. Kit c: each consumer warpgroup scales its own rows of Q (wip/sm90-scale-batch),
# instead of the producer warpgroup's three idle warps; kit r: main (session 37's kit r).
# 1. Every GPU gtest and the Python suite on kit c; the scaling suite under racecheck, synccheck
#    and memcheck.
# 2. c against r, alternated, three rounds each, one seed, on the cases the scaling touches.
# 3. The scaling forced on (c1) against auto (c) where auto leaves it off: ViT-L/14, D = 256,
#    D = 128 N = 1024, two rounds each.
# 4. Kit c beside cuDNN and FA2 on every case.
# carry: [".devbin/s38"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
for K in r c; do
  tar xJf .devbin/s38/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
(PYTHONPATH=/tmp/pkg-c LD_LIBRARY_PATH=/tmp/kit-c timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-c.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-c.txt) &
ppid=$!
T=/tmp/kit-c/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-c GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-c.txt.gz
echo "== kit-c GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-c.txt
save
LD_LIBRARY_PATH=/tmp/kit-c GTEST_FILTER='Cuda/GpuSm90QueryScaling.SeveralTilesPerCta/bf16' timeout -k 5 120 compute-sanitizer --tool racecheck $T > $R/racecheck-c.txt 2>&1
echo "== racecheck rc=$? $(el)"; tail -2 $R/racecheck-c.txt
LD_LIBRARY_PATH=/tmp/kit-c GTEST_FILTER='Cuda/GpuSm90QueryScaling.SeveralTilesPerCta/bf16' timeout -k 5 120 compute-sanitizer --tool synccheck $T > $R/synccheck-c.txt 2>&1
echo "== synccheck rc=$? $(el)"; tail -2 $R/synccheck-c.txt
F='Cuda/GpuSm90QueryScaling.SplitClustersAndWideTiles/bf16:Cuda/GpuSm90QueryScaling.CausalGroupedLayoutsVarlenAndScales/f16'
LD_LIBRARY_PATH=/tmp/kit-c GTEST_FILTER="$F" timeout -k 5 150 compute-sanitizer --tool memcheck $T > $R/memcheck-c.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -2 $R/memcheck-c.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 38"
SHAPES="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sdxl-self-128 --case sd15-self-64 --case sd15-self-32 --case dit-xl2-512 --case flux-1024 --case flux-2048"
n=0
for K in c r r c c r; do
  n=$((n + 1))
  PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/kit-$K timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
for K in c1 c c c1; do
  n=$((n + 1))
  if [ $K = c1 ]; then export FLASHVISION_SM90_FWD_PRESCALE=1; else unset FLASHVISION_SM90_FWD_PRESCALE; fi
  PYTHONPATH=/tmp/pkg-c LD_LIBRARY_PATH=/tmp/kit-c timeout -k 5 60 $B --case vit-l14-336 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d128-n1024 --case vit-h14-224 --json $R/forced-$n-$K.json > $R/forced-$n-$K.txt 2>&1
  echo "== forced $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_PRESCALE
python3 - $R <<'PY'
import json, glob, sys, collections
for prefix, a_kit, b_kit in (("vs", "c", "r"), ("forced", "c1", "c")):
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in sorted(glob.glob(f"{sys.argv[1]}/{prefix}-*.json")):
        kit = f.rsplit("-", 1)[1][:-5]
        for r in json.load(open(f))["records"]:
            if r["impl"] == "flashvision" and r.get("ms"):
                t[r["case"]][kit].append(r["ms"] * 1000)
    for case, v in t.items():
        a, b = min(v[a_kit]), min(v[b_kit])
        print(f"{case:20s} {a_kit} {a:9.2f} {b_kit} {b:9.2f} us  {a_kit}/{b_kit} {a / b:6.3f}  {a_kit} {[round(x, 1) for x in v[a_kit]]} {b_kit} {[round(x, 1) for x in v[b_kit]]}")
PY
save
PYTHONPATH=/tmp/pkg-c LD_LIBRARY_PATH=/tmp/kit-c timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit c and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
save
echo "$(el) done"; save
