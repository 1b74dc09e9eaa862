#!/usr/bin/env bash
# Device call 2: sm90 v2 (persistent, ping-pong, intra-warpgroup overlap): tests, sanitizer, bench.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
B=$(dirname "$0"); S=$OUT/summary.txt
timeout 150 $B/flashvision_gpu_tests --gtest_filter='*sm90*:*Sm90*' > $OUT/sm90.log 2>&1
echo "sm90 tests rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/sm90.log | head -3 | tr '\n' ' ')" | tee -a $S
grep -E "^\[  FAILED  \]" $OUT/sm90.log | head -30 >> $S
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='*GpuSanitize*sm90*' > /tmp/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1)" | tee -a $S
done
cat /tmp/san_*.log | head -200 > $OUT/sanitizer.log
timeout 200 $B/flashvision bench --device cuda --case all --kernel sm90 --no-naive --budget 0.15 --json $OUT/bench_sm90.json > $OUT/bench.log 2>&1
echo "bench sm90 rc=$?" | tee -a $S
timeout 150 python3 $B/sdpa_peers.py --budget 0.15 --json $OUT/peers.json --impl sdpa-flash --impl sdpa-cudnn >> $OUT/bench.log 2>&1
echo "peers rc=$?" | tee -a $S
