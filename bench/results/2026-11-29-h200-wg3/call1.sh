#!/usr/bin/env bash
# Session 4, device call 1: three consumer warpgroups (192-row tiles) for the sm90 forward at
# buckets 32-64 (long key-block width) — sm90 GPU tests, memcheck, forward against main's binary;
# and a probe of the MUFU throughput of ex2 in f32 against the packed bf16x2 / f16x2 forms.
set -uo pipefail
B=.devbin; O=/tmp/o1; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a $S
$B/probe/ex2_probe 2>&1 | tee -a $S
cuobjdump -sass $B/probe/ex2_probe | grep -E "MUFU|F2F|HADD2|PRMT" | sort | uniq -c | head -20 | tee -a $S
for i in $(seq 0 7); do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $B/wg3/flashvision_gpu_tests \
    --gtest_filter='*sm90*:*Sm90*' > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests_sm90.log
echo "sm90 tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' /tmp/t_*.log | sort -u | head | tee -a $S
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/wg3/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/san.log 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/san.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san.log)" | tee -a $S
C="--case sweep-d64-n1024 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --case sdxl-cross --case sd15-self-64 --case sd15-cross-64 --case vit-b16-224 --case sweep-d128-n4096"
for round in 1 2; do for v in main wg3; do
  timeout 100 $B/$v/flashvision bench --device cuda --kernel sm90 --no-naive --budget 0.15 $C \
    --json $O/${v}_$round.json > $O/${v}_$round.log 2>&1
  echo "== $v $round: $(grep ' fwd ' $O/${v}_$round.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
echo "done $(( $(date +%s)-t0 ))s" | tee -a $S
tar czf $OUT/call1.tgz -C $O .
