#!/usr/bin/env bash
# Session 26, call 4: kit land (wip/sm90-mc-wide80 at e569ee5, what lands). The multicast tests
# under a timeout, then the full GPU gtests; DiT-XL/2 and ViT-H/14 with multicast at auto and 0.
# carry: [".devbin/s26"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-land
tar xJf .devbin/s26/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
timeout -k 5 150 $T --gtest_filter='*KvMulticast*' > $R/gtests-multicast.txt 2>&1; rc=$?
echo "== multicast tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-multicast.txt | head -20
[ $rc -ne 0 ] && { save; exit 1; }
shards=14; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter='-*KvMulticast*' >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests.txt.gz
echo "== GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
for m in auto 0 auto 0; do
  FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 30 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs \
    --budget 0.2 --case dit-xl2-512 --case vit-h14-224 >> $R/ab.txt 2>&1; echo "== ab mc=$m rc=$?"
done
grep -E "^(dit|vit)" $R/ab.txt
echo "$(el) done"; save
