#!/usr/bin/env bash
# Session 5, call 4: (a) wip/sm90-bwd-dq (decoupled dQ with bulk reduce-adds, next step's S/dP
# issued early at D <= 80): focused tests, the sm90 suites, sanitizers, A/B fwd+bwd against the
# bwd-buckets binary; (b) wip/sm80-d256 (helper's call.sh: its tests, main vs wip sm80 D=256 and
# D=64 tiles); (c) main's automatic forward tile on the D=72/80 cases (wide tile at 80, c4/mainnew).
set -uo pipefail
O=/tmp/o4; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call4.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/bwd-dq
timeout -k 5 200 $B/flashvision_gpu_tests --gtest_filter='*Sm90Backward*:Sm90BwdTile*:GpuSm90Dispatch.*' > $O/dq_focused.log 2>&1
echo "dq focused rc=$? $(grep -E '^\[  (PASSED|FAILED)' $O/dq_focused.log | tr '\n' ' ') ($(el))" | tee -a $S
grep -E "^\[  FAILED" $O/dq_focused.log | head -5 | tee -a $S
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $B/flashvision_gpu_tests \
  --gtest_filter='*sm90*:*Sm90*' > $O/dq_t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "dq sm90 suites ($(el)): $(grep -h '^\[  PASSED\|^\[  FAILED  \] [0-9]' $O/dq_t_*.log | tr '\n' ' ')" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/dq_t_*.log | sort -u | head | tee -a $S
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.*/sm90' > $O/dq_memcheck.log 2>&1
echo "dq memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/dq_memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.DenseCausalGqa/sm90:Cuda/GpuSanitize.VarlenTorchLayout/sm90:Cuda/GpuSanitize.HeadDimInBucket128/sm90' > $O/dq_racecheck.log 2>&1
echo "dq racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/dq_racecheck.log | tail -1) ($(el))" | tee -a $S
grep -m3 -A3 "Race reported\|Error: Race" $O/dq_racecheck.log | head -12 | tee -a $S
OLD=.devbin/c4/old/flashvision; NEW=$B/flashvision
for r in 1 2; do for k in OLD NEW; do bin=${!k}; timeout -k 5 90 $bin bench --device cuda --backward --backward-kernel sm90 --no-naive \
  --case sweep-d128-n4096 --case sweep-d64-n4096 --case sdxl-self-128 --case flux-1024 --case dit-xl2-512 --case vit-h14-224 \
  --json $O/dq_bwd_${k}_$r.json > $O/dq_bwd_${k}_$r.log 2>&1; echo "dq bench $k r$r rc=$? ($(el))" | tee -a $S; done; done
for k in OLD NEW; do echo "-- $k"; grep -h "fwd+bwd " $O/dq_bwd_${k}_2.log | grep -v " rep " | awk '{print $1, $4, $8}'; done | tee -a $S
timeout -k 5 60 .devbin/c4/mainnew/flashvision bench --device cuda --no-naive --case dit-xl2-512 --case vit-h14-224 \
  --case sd15-self-32 --case sd15-self-64 --case vit-b16-224 --json $O/mainnew_fwd.json > $O/mainnew_fwd.log 2>&1
echo "mainnew auto fwd rc=$? ($(el))" | tee -a $S; grep " fwd " $O/mainnew_fwd.log | awk '{print $1, $4, $8}' | tee -a $S
timeout -k 5 280 bash .devbin/sm80-d256/call.sh; echo "sm80-d256 rc=$? ($(el))" | tee -a $S
