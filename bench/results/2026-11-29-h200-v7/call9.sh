#!/usr/bin/env bash
# Session 5, call 9: the whole GPU test binary of main after the overlap merge and the shared
# expect_env_value_rejected test helper (uncommitted at the time, built from the working tree).
set -uo pipefail
O=/tmp/o9; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call9.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 .devbin/final/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
grep -h "IsRejectedByName" $O/t_*.log | grep -E "OK|FAILED" | head -12 | tee -a $S
