#!/usr/bin/env bash
# Session 23, call 7: kit skip (wip/sm90-skip-padding at e74e9b9: consumers whose
# rows all lie past the sequence only keep pace) through the full GPU gtests and memcheck on the
# idle-consumer tests; the cases with idle consumers (DiT-XL/2: two of the last 192-row tile's
# three; ViT-H/14: one) and controls alternated qtext2 skip skip qtext2 qtext2 skip (0.2 s a
# measurement; qtext2 = main's GPU code at 8a1ce75).
# carry: [".devbin/s23/kit-qtext2.tar.xz", ".devbin/s23/kit-skip.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res7; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in qtext2 skip; do
  tar xJf .devbin/s23/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use skip
T=/tmp/kit-skip/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-skip.txt.gz
echo "== GPU gtests skip"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
grep -h "IdleWarpgroups" /tmp/shard*.txt | grep -E "OK|FAILED" | head
timeout -k 5 70 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*GpuSm90IdleWarpgroups.*/bf16' > $R/memcheck-skip.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-skip.txt
echo "$(el) tests done"; save
cases="--case dit-xl2-512 --case vit-h14-224 --case vit-b16-224 --case sd15-self-32 --case sweep-d64-n4096"
n=0
for k in qtext2 skip skip qtext2 qtext2 skip; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 $cases \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  grep -E " flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) done"; save
