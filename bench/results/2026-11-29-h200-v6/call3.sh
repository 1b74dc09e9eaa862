#!/usr/bin/env bash
# Session 4, device call 3: the Hopper backward (first version) — GPU suite, sanitizers, fwd+bwd
# with the sm90 and the sm80 backward of the same binary and main's; and branch wip/sm80-bwd-v5
# (sm80 backward without the masked-path cost) — its backward tests and bench against main.
set -uo pipefail
B=.devbin; O=/tmp/o3; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
shards() {  # name binary filter shards timeout
  local v=$1 bin=$2 filt=$3 n=$4 t=$5
  for i in $(seq 0 $((n-1))); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout $t $bin --gtest_filter="$filt" > /tmp/${v}_$i.log 2>&1 &
  done; wait; cat /tmp/${v}_*.log > $O/tests_$v.log
  echo "$v: passed $(grep -h '^\[  PASSED  \]' /tmp/${v}_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/${v}_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/${v}_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/${v}_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a $S
  grep -h '^\[  FAILED  \] [A-Z]' /tmp/${v}_*.log | sort -u | head -30 | tee -a $S
}
timeout 120 $B/new/flashvision_gpu_tests --gtest_filter='*GpuSm90Backward*:*GpuSm90Dispatch*' > $O/bwd_first.log 2>&1
echo "sm90 bwd focused rc=$? $(grep -c '^\[       OK \]' $O/bwd_first.log) ok; failed: $(grep '^\[  FAILED  \] [A-Z]' $O/bwd_first.log | sort -u | head -12 | tr '\n' ' ')" | tee -a $S
grep -m5 -B2 -A12 "Failure" $O/bwd_first.log | head -60 > $O/bwd_first_failures.txt
shards new $B/new/flashvision_gpu_tests '*' 12 240
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/new/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*/sm90:*GpuSm90Backward.VarlenWithEmptySequences/bf16' > $O/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) ($(( $(date +%s)-t0 ))s)" | tee -a $S
done
C="--case sweep-d64-n1024 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sdxl-self-128 --case flux-1024 --case vit-b16-224 --case vit-l14-336 --case video-49f-720p"
for k in sm90 sm80; do
  timeout 150 $B/new/flashvision bench --device cuda --backward --backward-kernel $k --no-naive --budget 0.12 $C \
    --json $O/bwd_new_$k.json > $O/bwd_new_$k.log 2>&1
  echo "== new bwd=$k: $(grep 'fwd+bwd' $O/bwd_new_$k.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done
shards bwd5 $B/bwd-v5/flashvision_gpu_tests 'Cuda/GpuBwdTileVariants.*:Cuda/GpuSplitBackward.*:GpuDeterministic.*:Cuda/GpuFeatures.*:Cuda/GpuSweep.*:Cuda/GpuVsCpu.*:Cuda/GpuWorkspace.*' 8 240
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/bwd-v5/flashvision_gpu_tests --gtest_filter='Cuda/GpuBwdTileVariants.Masked*/bf16_sm80' > $O/san_bwd5.log 2>&1
echo "bwd5 memcheck rc=$? $(grep 'ERROR SUMMARY' $O/san_bwd5.log | tail -1)" | tee -a $S
C5="--case sweep-d128-n4096 --case sweep-d64-n4096 --case sweep-d256-n4096 --case flux-1024 --case sdxl-self-128"
for round in 1 2; do for v in main bwd-v5; do
  timeout 100 $B/$v/flashvision bench --device cuda --kernel sm80 --backward --no-naive --budget 0.12 $C5 \
    --json $O/b5_${v}_$round.json > $O/b5_${v}_$round.log 2>&1
  echo "== $v $round: $(grep 'fwd+bwd' $O/b5_${v}_$round.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
echo "done $(( $(date +%s)-t0 ))s" | tee -a $S
tar czf $OUT/call3.tgz -C $O .
