#!/usr/bin/env bash
# Device call 1: sm90 correctness first, then the whole GPU suite, SASS check, and a bench.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
B=$(dirname "$0"); S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
echo "HGMMA in sm90 SASS: $(cuobjdump -sass $B/flashvision | grep -c HGMMA)" | tee -a $S
timeout 120 $B/flashvision_gpu_tests --gtest_filter='*sm90*:*Sm90*' > $OUT/sm90.log 2>&1
echo "sm90 tests rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/sm90.log | head -3 | tr '\n' ' ')" | tee -a $S
grep -E "^\[  FAILED  \]" $OUT/sm90.log | head -40 >> $S
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 300 $B/flashvision_gpu_tests --gtest_filter='-*sm90*:*Sm90*' > /tmp/shard_$i.log 2>&1 &
done
wait
cat /tmp/shard_*.log > $OUT/all.log
echo "all (sm80) shards: passed $(grep -h '^\[  PASSED  \]' /tmp/shard_*.log | awk '{s+=$4} END {print s}') failed-lines $(grep -c '^\[  FAILED  \]' $OUT/all.log)" | tee -a $S
timeout 200 $B/flashvision bench --device cuda --case all --kernel sm90 --no-naive --budget 0.15 --json $OUT/bench_sm90.json > $OUT/bench.log 2>&1
echo "bench sm90 rc=$?" | tee -a $S
timeout 150 python3 $B/sdpa_peers.py --budget 0.15 --json $OUT/peers.json --impl sdpa-flash --impl sdpa-cudnn >> $OUT/bench.log 2>&1
echo "peers rc=$?" | tee -a $S
