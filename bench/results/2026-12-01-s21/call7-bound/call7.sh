#!/usr/bin/env bash
# Session 21, device call 7: branch wip/sm90-stale-max at the score bound (kit bound: the softmax without a per-score max where key norms bound the scores) tested (GPU gtests,
# 12 shards) and timed against main (kit main): every BENCH.md case with cuDNN, processes
# alternated main bound bound main (0.2 s per measurement); then the long cases held 2 s per
# implementation with --telemetry, alternated the same way. Everything but log.txt goes into
# results.tgz. carry: [".devbin/s20/kit-main.tar.xz", ".devbin/s21/kit-bound.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res7; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
tar xJf .devbin/s21/kit-bound.tar.xz -C /tmp || exit 1
for k in main bound; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use bound
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 /tmp/kit-bound/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-bound/bin/flashvision_gpu_tests --gtest_filter='*ScoresRisingFarWithTightNormBound*/*bf16_sm90*:*GpuSm90KeyBlockBoundaries*' > /tmp/san.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " /tmp/san.txt; gzip -c /tmp/san.txt > $R/memcheck.txt.gz
echo "$(el) tests done"; save
n=0
for k in main bound bound main; do
  n=$((n+1)); use $k
  timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
n=0
for k in main bound bound main; do
  n=$((n+1)); use $k
  timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 2 --telemetry \
    --case sweep-d64-n16384 --case sweep-d128-n16384 --case sweep-d256-n16384 --case flux-2048 \
    --json $R/held-$n-$k.json > $R/held-$n-$k.txt 2>&1; echo "== held run $n $k rc=$?"
  grep -E "^(sweep|flux).*(fwd  |MHz)" $R/held-$n-$k.txt
  save
done
echo "$(el) all done"; save
