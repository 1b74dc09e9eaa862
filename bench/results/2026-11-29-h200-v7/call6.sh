#!/usr/bin/env bash
# Session 5, call 6: wip/sm90-bwd-dq2 (main's dQ column split, float2 atomics replaced by staging +
# cp.reduce.async.bulk per row segment): tests, sanitizers, A/B fwd+bwd against main's kernel
# (c4/old = the buckets merge), and Nsight Compute on main's D=128 backward kernel.
set -uo pipefail
O=/tmp/o6; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call6.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/bwd-dq2
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $B/flashvision_gpu_tests \
  --gtest_filter='*sm90*:*Sm90*' > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "dq2 sm90 suites ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.DenseCausalGqa/sm90:Cuda/GpuSanitize.VarlenTorchLayout/sm90:Cuda/GpuSanitize.HeadDimInBucket128/sm90' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
OLD=.devbin/c4/old/flashvision; NEW=$B/flashvision
for r in 1 2; do for k in OLD NEW; do bin=${!k}; timeout -k 5 90 $bin bench --device cuda --backward --backward-kernel sm90 --no-naive \
  --case sweep-d128-n4096 --case sweep-d64-n4096 --case sdxl-self-128 --case flux-1024 --case dit-xl2-512 --case vit-h14-224 \
  --json $O/bwd_${k}_$r.json > $O/bwd_${k}_$r.log 2>&1; echo "bench $k r$r rc=$? ($(el))" | tee -a $S; done; done
for r in 1 2; do for k in OLD NEW; do echo "-- $k r$r $(grep -h 'fwd+bwd ' $O/bwd_${k}_$r.log | grep -v ' rep ' | awk '{printf "%s %s | ", $1, $8}')"; done; done | tee -a $S
timeout -k 5 120 ncu -k regex:bwd_kernel -c 1 --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
  $OLD bench --device cuda --backward --backward-kernel sm90 --no-naive --case sweep-d128-n4096 --repeat 1 --warmup 0 > $O/ncu_bwd_d128.txt 2>&1
echo "ncu rc=$? ($(el))" | tee -a $S
