#!/usr/bin/env bash
# Session 4, device call 4 (call 3 hung: the backward's setmaxnreg asked for more registers than
# the CTA holds): the Hopper backward — focused tests first, and only if they pass the whole
# suite and sanitizers; fwd+bwd with the sm90 and sm80 backward; branch wip/sm80-bwd-v5.
set -uo pipefail
B=.devbin; O=/tmp/o4; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/call4.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }
shards() {  # name binary filter shards timeout
  local v=$1 bin=$2 filt=$3 n=$4 t=$5
  for i in $(seq 0 $((n-1))); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout -k 5 $t $bin --gtest_filter="$filt" > /tmp/${v}_$i.log 2>&1 &
  done; wait; cat /tmp/${v}_*.log > $O/tests_$v.log
  echo "$v: passed $(grep -h '^\[  PASSED  \]' /tmp/${v}_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/${v}_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/${v}_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/${v}_*.log | wc -l) $(el)" | tee -a $S
  grep -h '^\[  FAILED  \] [A-Z]' /tmp/${v}_*.log | sort -u | head -30 | tee -a $S
}
timeout -k 5 60 $B/new/flashvision_gpu_tests --gtest_filter='*GpuSm90Backward*:*GpuSm90Dispatch*' > $O/bwd_first.log 2>&1
rc=$?
echo "sm90 bwd focused rc=$rc ok $(grep -c '^\[       OK \]' $O/bwd_first.log); failed: $(grep '^\[  FAILED  \] [A-Z]' $O/bwd_first.log | sort -u | head -12 | tr '\n' ' ') $(el)" | tee -a $S
grep -m6 -A10 "Failure" $O/bwd_first.log | head -70 >> $S
if [ $rc -eq 0 ]; then
  shards new $B/new/flashvision_gpu_tests '*' 12 120
  for tool in memcheck racecheck; do
    timeout -k 5 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/new/flashvision_gpu_tests \
      --gtest_filter='*GpuSanitize*/sm90:*GpuSm90Backward.VarlenWithEmptySequences/bf16' > $O/san_$tool.log 2>&1
    echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) $(el)" | tee -a $S
  done
fi
C="--case sweep-d64-n1024 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sdxl-self-128 --case flux-1024 --case vit-b16-224 --case vit-l14-336 --case video-49f-720p"
if [ $rc -eq 0 ]; then for k in sm90 sm80; do
  timeout -k 5 80 $B/new/flashvision bench --device cuda --backward --backward-kernel $k --no-naive --budget 0.1 $C \
    --json $O/bwd_new_$k.json > $O/bwd_new_$k.log 2>&1
  echo "== new bwd=$k: $(grep 'fwd+bwd' $O/bwd_new_$k.log | awk '{printf "%s %s %s | ", $1, $8, $NF}')" | tee -a $S
done; fi
shards bwd5 $B/bwd-v5/flashvision_gpu_tests 'Cuda/GpuBwdTileVariants.*:Cuda/GpuSplitBackward.*:GpuDeterministic.*:Cuda/GpuFeatures.*:Cuda/GpuSweep.*:Cuda/GpuWorkspace.*' 12 100
C5="--case sweep-d128-n4096 --case sweep-d64-n4096 --case sweep-d256-n4096 --case flux-1024 --case sdxl-self-128"
for round in 1 2; do for v in main bwd-v5; do
  timeout -k 5 40 $B/$v/flashvision bench --device cuda --kernel sm80 --backward --no-naive --budget 0.1 $C5 \
    --json $O/b5_${v}_$round.json > $O/b5_${v}_$round.log 2>&1
  echo "== $v $round: $(grep 'fwd+bwd' $O/b5_${v}_$round.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
echo "done $(el)" | tee -a $S
