#!/usr/bin/env bash
# Session 21, device call 8: the score bound as it lands (kit bound2: wip/sm90-stale-max with the
# vectorized key norm pass and the default gate) tested (GPU gtests, 12 shards; memcheck on the
# bound's tests) and timed against main (kit main) on every BENCH.md case with cuDNN, processes
# alternated main bound2 bound2 main, 0.1 s per measurement. Everything but log.txt goes into
# results.tgz. carry: [".devbin/s20/kit-main.tar.xz", ".devbin/s21/kit-bound2.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res8; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in main bound2; do
  tar xJf .devbin/s2*/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use bound2
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 /tmp/kit-bound2/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-bound2/bin/flashvision_gpu_tests --gtest_filter='*ScoreBound*/bf16_sm90:*TightNormBound*/bf16_sm90' > /tmp/san.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " /tmp/san.txt; gzip -c /tmp/san.txt > $R/memcheck.txt.gz
echo "$(el) tests done"; save
n=0
for k in main bound2 bound2 main; do
  n=$((n+1)); use $k
  timeout -k 5 80 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) all done"; save
