#!/usr/bin/env bash
# Session 4, device call 8: every consumer thread arrives on the backward's slot-empty barrier —
# racecheck and memcheck on the sanitize subset, the sm90 backward tests, and fwd+bwd of four cases.
set -uo pipefail
B=.devbin; O=/tmp/o8; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/call8.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }
for tool in racecheck memcheck; do
  timeout -k 5 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/rows/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*/sm90:*GpuSm90Backward.VarlenWithEmptySequences/bf16' > $O/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) $(el)" | tee -a $S
done
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -k 5 60 $B/rows/flashvision_gpu_tests --gtest_filter='*GpuSm90Backward*:*Sanitize*:*GpuSweep*' > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests.log
echo "tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) $(el)" | tee -a $S
timeout -k 5 40 $B/rows/flashvision bench --device cuda --backward --no-naive --budget 0.1 --case sweep-d64-n4096 --case sweep-d128-n4096 --case sdxl-self-128 --case flux-1024 \
  --json $O/bench.json > $O/bench.log 2>&1
echo "== $(grep 'fwd+bwd' $O/bench.log | awk '{printf "%s %s | ", $1, $8}') $(el)" | tee -a $S
