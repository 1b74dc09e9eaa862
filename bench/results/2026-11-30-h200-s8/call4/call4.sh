#!/usr/bin/env bash
# Session 8, call 4: branch wip/sm80-fwd-split (the sm80 forward's last-wave key split, sm80 and
# sm90 sharing one split model and combine): its whole GPU test binary in 8 shards, memcheck on
# the split tests, then the sm80 forward with FLASHVISION_SM80_FWD_SPLIT=0 and auto, two rounds.
set -uo pipefail
O=/tmp/s8o4; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call4.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=/tmp/sm80-split; mkdir -p $B; tar xJf .devbin/sm80-split/bins.tar.xz -C $B
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='*Sm80FwdSplit*' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
C="--case flux-1024 --case sdxl-self-128 --case video-49f-720p --case sweep-d64-n16384 --case sweep-d128-n4096 --case sd15-self-64 --case flux-2048"
for r in 1 2; do for m in 0 auto; do
  FLASHVISION_SM80_FWD_SPLIT=$m timeout -k 5 80 $B/flashvision bench --device cuda --kernel sm80 --no-naive --budget 0.2 $C \
    --json $O/split-$m-$r.json > $O/split-$m-$r.log 2>&1
  echo "== split=$m $r rc=$? ($(el))" | tee -a $S
  grep -E "^\S+ +\S+ +flashvision" $O/split-$m-$r.log | awk '{print $1, $4, $5, $6, $7, $8, $10}' | tee -a $S
done; done
