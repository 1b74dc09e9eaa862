#!/usr/bin/env bash
# Session 4, device call 6: the Hopper backward with LSE and D staged by the producer's cp.async
# (rows) against main's consumer-staged version (new) — sm90 backward tests, sanitizers, and
# fwd+bwd of the backward's cases, two rounds interleaved.
set -uo pipefail
B=.devbin; O=/tmp/o6; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/call6.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }
timeout -k 5 60 $B/rows/flashvision_gpu_tests --gtest_filter='*GpuSm90Backward*:*GpuSm90Dispatch*:*GpuSanitize*:*GpuSweep*sm90*:*GpuFeatures*sm90*' > $O/tests.log 2>&1
rc=$?
echo "rows tests rc=$rc ok $(grep -c '^\[       OK \]' $O/tests.log) failed: $(grep '^\[  FAILED  \] [A-Z]' $O/tests.log | sort -u | head -8 | tr '\n' ' ') $(el)" | tee -a $S
if [ $rc -eq 0 ]; then for tool in memcheck racecheck; do
  timeout -k 5 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/rows/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*/sm90:*GpuSm90Backward.VarlenWithEmptySequences/bf16' > $O/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) $(el)" | tee -a $S
done; fi
C="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sdxl-self-128 --case flux-1024 --case vit-l14-336"
for round in 1 2; do for v in new rows; do
  timeout -k 5 50 $B/$v/flashvision bench --device cuda --backward --no-naive --budget 0.1 $C \
    --json $O/${v}_$round.json > $O/${v}_$round.log 2>&1
  echo "== $v $round: $(grep 'fwd+bwd' $O/${v}_$round.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
echo "done $(el)" | tee -a $S
