#!/usr/bin/env bash
# Session 25, call 5: kit mc3 (wip/sm90-kv-multicast at d2335c6: K/V shared by default only for
# buckets 48 and 80 with two waves of tiles; the 128-row tile instead of a wide one without a
# cluster kernel). The device's resident clusters; the multicast tests, then the full GPU gtests;
# every case flashvision-only alternated FLASHVISION_SM90_FWD_MULTICAST=0 / auto (0 a a 0, 0.1 s);
# every case beside every peer at the defaults (0.2 s, --telemetry).
# carry: [".devbin/s25"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
.devbin/s25/clusters | tee $R/clusters.txt
tar xJf .devbin/s25/kit-mc3.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-mc3 && cp -r python/flashvision /tmp/pkg-mc3/ && cp /tmp/kit-mc3/python/_C*.so /tmp/pkg-mc3/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-mc3 LD_LIBRARY_PATH=/tmp/kit-mc3
T=/tmp/kit-mc3/bin/flashvision_gpu_tests
MC='*KvMulticast*'
timeout -k 5 150 $T --gtest_filter="$MC" > $R/gtests-multicast.txt 2>&1; rc=$?
echo "== multicast tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-multicast.txt | head -20
[ $rc -ne 0 ] && { save; exit 1; }
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter="-$MC" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-mc3.txt.gz
echo "== GPU gtests mc3 (without the multicast suite)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
echo "$(el) tests done"; save
n=0
for m in 0 auto auto 0; do
  n=$((n+1))
  FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-mc$m.json > $R/ab-$n-mc$m.txt 2>&1; echo "== ab $n mc=$m rc=$?"
  save
done
echo "$(el) ab done"
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt; grep -E "^(dit|sd15-self-64) .*flashvision" $R/all-gpu.txt
echo "$(el) done"; save
