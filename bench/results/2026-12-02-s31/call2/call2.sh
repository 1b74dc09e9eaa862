#!/usr/bin/env bash
# Session 31, call 2. Kits: t (wip/sm90-wide-text, as in call 1) and i (wip/sm90-softmax-ilp on t:
# the softmax takes a block's exponents before its exponentials and sums and maxes in two
# interleaved parts; every bucket).
# 1. Kits t and i alternated (t, i, i, t) on the image cases and two D = 128 controls.
# 2. Nsight Compute's source view of SD 1.5's cross-attention kernel (192-row text tile) and of its
#    32 x 32 level's on kit t.
# 3. Every GPU gtest (12 shards) and the Python suite on kit t.
# carry: [".devbin/s31"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-t kit-i; do
  tar xJf .devbin/s31/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
C="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case dit-xl2-512 --case sweep-d64-n4096 --case sd15-cross-64 --case sdxl-cross --case sweep-d128-n4096 --case flux-1024"
n=0
for K in kit-t kit-i kit-i kit-t; do
  n=$((n + 1)); use $K
  timeout -k 5 80 $B $C --json $R/ilp-$n-$K.json > $R/ilp-$n-$K.txt 2>&1
  echo "== ilp $n $K rc=$? $(el)"; grep -E "^[a-z].*flashvision " $R/ilp-$n-$K.txt
done
save
use kit-t
timeout -k 5 90 ncu --set full --import-source no -k regex:fwd_kernel --launch-skip 3 --launch-count 1 \
  -o /tmp/ncu-text python3 bench/results/2026-12-02-s31/call1/one_call.py flashvision 2 8 4096 77 40 > $R/ncu-text.txt 2>&1
echo "== ncu text rc=$? $(el)"
ncu --import /tmp/ncu-text.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $R/sass-text-kit-t.csv.gz
ncu --import /tmp/ncu-text.ncu-rep --page details > $R/details-text-kit-t.txt 2>&1
grep -E "fwd_kernel|Duration|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" $R/details-text-kit-t.txt | head -6
save
timeout -k 5 90 ncu --set full --import-source no -k regex:fwd_kernel --launch-skip 3 --launch-count 1 \
  -o /tmp/ncu-s32 python3 bench/results/2026-12-02-s31/call1/one_call.py flashvision 2 8 1024 1024 80 > $R/ncu-s32.txt 2>&1
echo "== ncu sd15-self-32 rc=$? $(el)"
ncu --import /tmp/ncu-s32.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $R/sass-s32-kit-t.csv.gz
ncu --import /tmp/ncu-s32.ncu-rep --page details > $R/details-s32-kit-t.txt 2>&1
grep -E "fwd_kernel|Duration|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" $R/details-s32-kit-t.txt | head -6
save
T=/tmp/kit-t/bin/flashvision_gpu_tests
(timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-kit-t.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-kit-t.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-kit-t.txt.gz
echo "== kit-t GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== kit-t pytest $(el)"; tail -4 $R/pytest-kit-t.txt
echo "$(el) done"; save
