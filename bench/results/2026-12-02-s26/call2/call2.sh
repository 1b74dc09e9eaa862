#!/usr/bin/env bash
# Session 26, call 2: kit cs2 (wip/sm90-cluster-split at 52704b5 on wip/sm90-mc-wide80 at c5d17ac:
# K/V sharing by default only where a tile walks 8 key blocks or more). The multicast, cluster
# split and forward split tests, then the full GPU gtests; ViT-H/14 and DiT-XL/2 with multicast at
# auto and 0, alternated twice; Nsight Compute's source view (SASS with stall samples) of SD 1.5
# 16 x 16's kernel with the cluster split forced and off; every case beside every peer with the
# cluster split off.
# carry: [".devbin/s26"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-cs2
tar xJf .devbin/s26/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
NEW='*KvMulticast*:*ClusterSplit*'
timeout -k 5 200 $T --gtest_filter="$NEW" > $R/gtests-new.txt 2>&1; rc=$?
echo "== new tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-new.txt | head -20
[ $rc -ne 0 ] && { save; exit 1; }
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=0 GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter="-$NEW" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests.txt.gz
echo "== GPU gtests (cluster split off, without the new suites) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
export FLASHVISION_SM90_FWD_CLUSTER_SPLIT=0
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
for rep in 1 2; do
  for m in auto 0; do
    FLASHVISION_SM90_FWD_MULTICAST=$m timeout -k 5 40 $B --case vit-h14-224 --case dit-xl2-512 --json $R/ab-$rep-mc$m.json > $R/ab-$rep-mc$m.txt 2>&1; echo "== ab $rep mc=$m rc=$?"
    grep -E "^(dit|vit)" $R/ab-$rep-mc$m.txt
  done
done
echo "$(el) ab done"; save
timeout -k 5 240 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt; grep -E "^[a-z].*flashvision  " $R/all-gpu.txt | head -30
echo "$(el) all done"; save
for m in 1 0; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=$m timeout -k 5 120 ncu --set full --import-source no -k regex:fwd_kernel --launch-skip 3 --launch-count 1 \
    -o /tmp/cs$m python3 .devbin/s26/one_case.py sd15-self-16 flashvision 4 > $R/ncu-cs$m.txt 2>&1; echo "== ncu cs=$m rc=$?"
  ncu --import /tmp/cs$m.ncu-rep --page source --csv --print-source sass > $R/sass-cs$m.csv 2>&1; echo "== source rc=$? $(wc -l < $R/sass-cs$m.csv) lines"
  ncu --import /tmp/cs$m.ncu-rep --page details > $R/details-cs$m.txt 2>&1
  grep -E "Duration|Warp Cycles Per Issued|No Eligible" $R/details-cs$m.txt | head -5
  save
done
echo "$(el) done"; save
