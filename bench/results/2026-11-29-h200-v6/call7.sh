#!/usr/bin/env bash
# Session 4, device call 7: main with the Hopper backward's LSE and D staged by the producer's
# cp.async — the whole GPU suite, sanitizers, every BENCH.md case (automatic kernels) and the
# SDPA peers (FA2, cuDNN) in the same call.
set -uo pipefail
B=.devbin; O=/tmp/o7; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/call7.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout -k 5 100 $B/rows/flashvision_gpu_tests > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests.log
echo "tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) $(el)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' /tmp/t_*.log | sort -u | head -20 | tee -a $S
for tool in memcheck racecheck; do
  timeout -k 5 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/rows/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*:*GpuSm90Backward.VarlenWithEmptySequences/bf16:*GpuBwdTileVariants.Masked*/bf16_sm80' > $O/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) $(el)" | tee -a $S
done
timeout -k 5 120 $B/rows/flashvision bench --device cuda --case all --backward --no-naive --budget 0.1 \
  --json $O/auto.json > $O/auto.log 2>&1
echo "bench auto rc=$? $(el)" | tee -a $S
timeout -k 5 100 python3 $B/sdpa_peers.py --backward --budget 0.1 --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/peers.json > $O/peers.log 2>&1
echo "peers rc=$? $(el)" | tee -a $S
