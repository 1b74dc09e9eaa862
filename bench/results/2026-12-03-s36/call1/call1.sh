#!/usr/bin/env bash
# Session 36, call 1. Kit s: main with bucket 160's half tile in two 96-column value slices
# (branch wip/sm90-value-slices); kit g: main (72cac2a's kernels, session 35's kit g).
# 1. Every GPU gtest and the Python suite on kit s; the half-tile suite under memcheck.
# 2. The shapes the sliced half tile changes, kits s and g alternated, three rounds each: SD 1.5's
#    16 x 16 level at batch 2 (the benchmark case) and 1, its cross-attention, head dim 144, and
#    batch 4, whose 128 half tiles no longer fit a wave sliced (128-row tiles instead).
# 3. sd15-self-16 with kit s beside cuDNN and FA2.
# carry: [".devbin/s35c", ".devbin/s36"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35c/kit-g.tar.xz -C /tmp || exit 1
tar xJf .devbin/s36/kit-s.tar.xz -C /tmp || exit 1
for k in g s; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
T=/tmp/kit-s/bin/flashvision_gpu_tests
(PYTHONPATH=/tmp/pkg-s LD_LIBRARY_PATH=/tmp/kit-s timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-s.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-s.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-s GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-s.txt.gz
echo "== kit-s GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-s.txt
LD_LIBRARY_PATH=/tmp/kit-s GTEST_FILTER='Cuda/GpuSm90HalfTiles.*/bf16:-*EveryHalfTile*' timeout -k 5 150 \
  compute-sanitizer --tool memcheck $T > $R/memcheck-s.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-s.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3"
SHAPES="--case sd15-self-16 --shape 1,8,256,256,160 --shape 2,8,256,77,160 --shape 2,8,256,256,144 --shape 4,8,256,256,160"
n=0
for K in s g g s s g; do
  n=$((n + 1))
  PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/kit-$K timeout -k 5 60 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
for case, v in t.items():
    a, b = min(v["s"]), min(v["g"])
    print(f"{case:28s} s {a:7.2f} g {b:7.2f} us  s/g {a / b:6.3f}  s {[round(x, 2) for x in v['s']]} g {[round(x, 2) for x in v['g']]}")
PY
PYTHONPATH=/tmp/pkg-s LD_LIBRARY_PATH=/tmp/kit-s timeout -k 5 60 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.3 --case sd15-self-16 --case sd15-self-32 --json $R/peers-s.json > $R/peers-s.txt 2>&1
echo "== peers rc=$? $(el)"; grep -E "fwd|best peer" $R/peers-s.txt
echo "$(el) done"; save
