#!/usr/bin/env bash
# Session 19, device call 9: wip/sm90-d512-one-launch (kit one: both 256-column slices of D = 512
# in one launch and one combine) tested (GPU gtests, memcheck on the D > 256 tests), then timed
# against main's GPU code (kit cand) by alternated processes. Everything but log.txt goes into
# results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res9; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in cand one; do tar xJf .devbin/s19/kit-$k.tar.xz -C /tmp || exit 1; done
for k in cand one; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use one
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 /tmp/kit-one/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
grep -h "HeadDimsAbove256\|Split" /tmp/shard*.txt | grep "OK \]\|FAILED \]" | head
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-one/bin/flashvision_gpu_tests --gtest_filter='GpuSm90Dispatch.HeadDimsAbove256*' > /tmp/san.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " /tmp/san.txt
echo "$(el) tests done"; save
GPU="--case vae-mid-512 --case sweep-d256-n1024 --case sdxl-cross --case vit-b16-224 --case sd15-self-64"
n=0
for k in cand one one cand; do
  n=$((n+1)); use $k
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --impl naive --cuda-graphs --budget 0.2 $GPU \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5, $9}' | paste -sd' '
done
echo "$(el) all done"; save
