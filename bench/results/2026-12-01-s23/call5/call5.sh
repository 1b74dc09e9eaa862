#!/usr/bin/env bash
# Session 23, call 5: kit qtext (wip/sm90-q-buffers at e848b65: two Q buffers at the text width only) through
# the full GPU gtests and memcheck on the text tiles going round both buffers and small causal cases; every case timed
# flashvision-only with processes alternated mdiv2 qtext qtext mdiv2 mdiv2 qtext (0.1 s a measurement; mdiv2 =
# main at 2df3da6).
# carry: [".devbin/s23/kit-mdiv2.tar.xz", ".devbin/s23/kit-qtext.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in mdiv2 qtext; do
  tar xJf .devbin/s23/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use qtext
T=/tmp/kit-qtext/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-qtext.txt.gz
echo "== GPU gtests qtext"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
grep -h "GpuSm90QBuffers" /tmp/shard*.txt | grep -E "OK|FAILED" | head
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*GpuSm90QBuffers.*/bf16:*CausalAlignment*/bf16_sm90:*VarlenMixedLengths*/bf16' > $R/memcheck-qtext.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-qtext.txt
echo "$(el) tests done"; save
n=0
for k in mdiv2 qtext qtext mdiv2 mdiv2 qtext; do
  n=$((n+1)); use $k
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  save
done
echo "$(el) done"; save
