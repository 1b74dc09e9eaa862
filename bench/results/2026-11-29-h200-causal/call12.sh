#!/usr/bin/env bash
# Device call 12: the sm90 tile order chosen per problem (schedule.h) — sm90 GPU tests,
# memcheck, and causal / non-causal forward against the previous binary (5ad67ed) in one call.
set -uo pipefail
O=/tmp/o11; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
for i in $(seq 0 7); do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 .devbin/new/flashvision_gpu_tests \
    --gtest_filter='*sm90*:*Sm90*' > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests_sm90.log
echo "sm90 tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' /tmp/t_*.log | sort -u | head | tee -a $S
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .devbin/new/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/san.log 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/san.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san.log)" | tee -a $S
C="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case flux-1024 --case video-49f-720p --case dit-xl2-512"
for v in main new; do for mode in causal noncausal; do
  flag=""; [ $mode = causal ] && flag="--causal"
  timeout 100 .devbin/$v/flashvision bench --device cuda --kernel sm90 $flag --no-naive --budget 0.15 $C \
    --json $O/${v}_${mode}.json > $O/${v}_${mode}.log 2>&1
  echo "== $v $mode: $(grep ' fwd ' $O/${v}_${mode}.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
tar czf $OUT/call11.tgz -C $O .
