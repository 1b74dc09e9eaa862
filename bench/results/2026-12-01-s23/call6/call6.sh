#!/usr/bin/env bash
# Session 23, call 6: kit qtext2 (wip/sm90-q-buffers at 8a1ce75: two Q buffers at the text width,
# and with one buffer the per-tile kernels' SASS identical to main's) through the full GPU gtests
# and memcheck on the Q-buffer and cross-tile tests; the cross-tile cases alternated mdiv2 qtext2
# qtext2 mdiv2 mdiv2 qtext2 (0.2 s a measurement; mdiv2 = main at 2df3da6); then qtext2 beside
# every peer (0.2 s, --telemetry).
# carry: [".devbin/s23/kit-mdiv2.tar.xz", ".devbin/s23/kit-qtext2.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res6; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in mdiv2 qtext2; do
  tar xJf .devbin/s23/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use qtext2
T=/tmp/kit-qtext2/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-qtext2.txt.gz
echo "== GPU gtests qtext2"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*GpuSm90QBuffers.*/bf16:*GpuSm90CrossTile.EveryBucket*/bf16' > $R/memcheck-qtext2.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-qtext2.txt
echo "$(el) tests done"; save
cases="--case vit-b16-224 --case sd15-cross-64 --case sdxl-cross --case sd15-self-16"
n=0
for k in mdiv2 qtext2 qtext2 mdiv2 mdiv2 qtext2; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 $cases \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  grep -E " flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) ab done"
use qtext2
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt
echo "$(el) done"; save
