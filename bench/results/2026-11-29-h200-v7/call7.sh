#!/usr/bin/env bash
# Session 5, call 7: main at 0474b5e (the deterministic and workspace tests on check_backward) —
# the whole GPU test binary; then wip/sm90-bwd-overlap (next step's S^T/dP^T issued before this
# step's dQ atomics, D <= 96): sm90 suites, sanitizers, A/B fwd+bwd against main's kernel.
set -uo pipefail
O=/tmp/o7; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call7.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
shards() {  # binary, filter, log prefix
  local pids=()
  for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $1 --gtest_filter="$2" \
    > $O/$3_$i.log 2>&1 & pids+=($!); done
  wait "${pids[@]}"
  echo "$3 ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/$3_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/$3_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/$3_*.log | wc -l)" | tee -a $S
  grep -h "^\[  FAILED  \] [A-Z]" $O/$3_*.log | sort -u | head | tee -a $S
}
shards .devbin/final/flashvision_gpu_tests '*' main
B=.devbin/bwd-overlap
shards $B/flashvision_gpu_tests '*sm90*:*Sm90*' ovl
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/memcheck.log 2>&1
echo "ovl memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/racecheck.log 2>&1
echo "ovl racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
OLD=.devbin/c4/old/flashvision; NEW=$B/flashvision
for r in 1 2; do for k in OLD NEW; do bin=${!k}; timeout -k 5 90 $bin bench --device cuda --backward --backward-kernel sm90 --no-naive \
  --case sweep-d64-n4096 --case sdxl-self-128 --case dit-xl2-512 --case vit-h14-224 --case sd15-self-64 --case sweep-d128-n4096 \
  --json $O/ovl_${k}_$r.json > $O/ovl_${k}_$r.log 2>&1; echo "bench $k r$r rc=$? ($(el))" | tee -a $S; done; done
for r in 1 2; do for k in OLD NEW; do echo "-- $k r$r $(grep -h 'fwd+bwd ' $O/ovl_${k}_$r.log | grep -v ' rep ' | awk '{printf "%s %s | ", $1, $8}')"; done; done | tee -a $S
