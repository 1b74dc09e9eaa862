#!/usr/bin/env bash
# Session 4, device call 9: __syncwarp and one arrival per warp on the backward's slot-empty
# barrier (sw) against every thread arriving (rows): racecheck, and fwd+bwd of four cases.
set -uo pipefail
B=.devbin; O=/tmp/o9; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/call9.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }
timeout -k 5 40 compute-sanitizer --tool racecheck --error-exitcode 9 $B/sw/flashvision_gpu_tests \
  --gtest_filter='*GpuSanitize*/sm90:*GpuSm90Backward.VarlenWithEmptySequences/bf16' > $O/san_racecheck.log 2>&1
echo "sw racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/san_racecheck.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_racecheck.log) $(el)" | tee -a $S
timeout -k 5 40 $B/sw/flashvision_gpu_tests --gtest_filter='*GpuSm90Backward*' > $O/tests.log 2>&1
echo "sw tests rc=$? ok $(grep -c '^\[       OK \]' $O/tests.log) $(el)" | tee -a $S
for round in 1 2; do for v in rows sw; do
  timeout -k 5 30 $B/$v/flashvision bench --device cuda --backward --no-naive --budget 0.08 --case sweep-d64-n4096 --case sweep-d128-n4096 --case sdxl-self-128 --case flux-1024 \
    --json $O/${v}_$round.json > $O/${v}_$round.log 2>&1
  echo "== $v $round: $(grep 'fwd+bwd' $O/${v}_$round.log | awk '{printf "%s %s | ", $1, $8}') $(el)" | tee -a $S
done; done
