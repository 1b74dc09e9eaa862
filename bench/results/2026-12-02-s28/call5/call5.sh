#!/usr/bin/env bash
# Session 28, call 5: the landing build, kit fp8a (wip/sm90-fp8 at 57e8efa; 59b3333 changes a
# comment only). The FP8 gtests, then the other GPU gtests beside the whole Python suite. (A
# first try, which also ran every case, lost its machine; the device time left held the tests.)
# carry: [".devbin/s28"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-fp8a
tar xJf .devbin/s28/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
NEW='*Fp8*'
timeout -k 5 100 $T --gtest_filter="$NEW" > $R/gtests-fp8.txt 2>&1; rc=$?
echo "== fp8 tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-fp8.txt | head -20
(timeout -k 5 170 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest.txt 2>&1; echo "pytest rc=$?" >> $R/pytest.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 $T --gtest_filter="-$NEW" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests.txt.gz
echo "== GPU gtests (without FP8) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
wait $ppid; echo "== pytest $(el)"; tail -4 $R/pytest.txt
save
echo "$(el) done"; save
