#!/usr/bin/env bash
# Session 28, call 1: kit fp8 (wip/sm90-fp8: the FP8 e4m3 forward, 192-key blocks at D = 128 and
# the 192-row tile at D = 64). The FP8 gtests, the other GPU gtests, the Python FP8 tests, then
# every case with flashvision (bf16 and FP8) beside cuDNN and FA2.
# carry: [".devbin/s28"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-fp8
tar xJf .devbin/s28/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
NEW='*Fp8*:*FP8*'
timeout -k 5 200 $T --gtest_filter="$NEW" > $R/gtests-fp8.txt 2>&1; rc=$?
echo "== fp8 tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $R/gtests-fp8.txt | head -30
save
shards=14; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter="-$NEW" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests.txt.gz
echo "== GPU gtests (without FP8) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8.py > $R/pytest-fp8.txt 2>&1
echo "== pytest fp8 rc=$? $(el)"; tail -15 $R/pytest-fp8.txt
save
timeout -k 5 280 python3 -m flashvision.bench --device cuda --impl flashvision --impl flashvision-fp8 --impl sdpa-cudnn \
  --impl sdpa-flash --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$? $(el)"; grep "vs best" $R/all-gpu.txt; grep -E "^[a-z].*flashvision" $R/all-gpu.txt | head -60
echo "$(el) done"; save
