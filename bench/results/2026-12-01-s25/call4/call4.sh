#!/usr/bin/env bash
# Session 25, call 4: kit mc2 (bucket 32 left out after calls 2-3; wip/sm90-kv-multicast: clusters of two CTAs share K and V through
# TMA multicast). The multicast tests alone under a timeout first (a deadlock would hang them),
# then the full GPU gtests, memcheck and synccheck on multicast cases; every case flashvision-only
# with FLASHVISION_SM90_FWD_MULTICAST alternated 0 1 1 0 0 1 (0.1 s a measurement); DiT-XL/2 and
# SD 1.5 32x32 on 128-row tiles both ways; the long D = 128 cases held 2 s both ways; then every
# case beside every peer with multicast at its default.
# carry: [".devbin/s25/kit-mc2.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s25/kit-mc2.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-mc2 && cp -r python/flashvision /tmp/pkg-mc2/ && cp /tmp/kit-mc2/python/_C*.so /tmp/pkg-mc2/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-mc2 LD_LIBRARY_PATH=/tmp/kit-mc2
T=/tmp/kit-mc2/bin/flashvision_gpu_tests
MC='*KvMulticast*'
timeout -k 5 150 $T --gtest_filter="$MC" > $R/gtests-multicast.txt 2>&1; rc=$?
echo "== multicast tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED  \]" $R/gtests-multicast.txt | head -40
if [ $rc -ne 0 ]; then
  timeout -k 5 150 compute-sanitizer --tool memcheck $T --gtest_filter='*KvMulticast.LastBlockShorterThanAHalf/bf16' > $R/memcheck-fail.txt 2>&1
  echo "== memcheck after failure rc=$?"; grep -E "ERROR SUMMARY|Invalid|error" $R/memcheck-fail.txt | head -20
  save; exit 1
fi
save
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter="-$MC" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-mc.txt.gz
echo "== GPU gtests mc (without the multicast suite)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
for tool in memcheck synccheck; do
  timeout -k 5 120 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*KvMulticast.LastBlockShorterThanAHalf/bf16:*KvMulticast.GroupedHeadsAndStrides/f16' > $R/$tool-mc.txt 2>&1
  echo "== $tool rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/$tool-mc.txt
done
echo "$(el) tests done"; save
n=0
for m in 0 1 1 0 0 1; do
  n=$((n+1))
  FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-mc$m.json > $R/ab-$n-mc$m.txt 2>&1; echo "== ab $n mc=$m rc=$?"
  save
done
echo "$(el) ab done"
for m in 0 1 0 1; do
  FLASHVISION_SM90_FWD_ROWS=128 FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 30 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 \
    --case dit-xl2-512 --case sd15-self-32 --case sd15-self-64 --case sweep-d64-n4096 >> $R/rows128.txt 2>&1; echo "== rows128 mc=$m rc=$?"
done
grep -E "^(dit|sd15|sweep)" $R/rows128.txt
echo "$(el) rows128 done"; save
k=0
for m in 0 1 0 1; do
  k=$((k+1))
  FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 2 --telemetry \
    --case sweep-d128-n16384 --case flux-2048 --case sweep-d256-n16384 --json $R/held-$k-mc$m.json >> $R/held.txt 2>&1; echo "== held mc=$m rc=$?"
done
grep -E "^(sweep|flux)" $R/held.txt
echo "$(el) held done"; save
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt
echo "$(el) done"; save
