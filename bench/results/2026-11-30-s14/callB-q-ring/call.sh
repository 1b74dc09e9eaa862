#!/bin/bash
# Session 14 call B (prepared in session 13): two Q buffers for the short/text-width tiles
# (branch wip/sm90-q-ring, package in qring/pkg, GPU tests qring/flashvision_gpu_tests, head dims
# 48 and 64) against the text-width package without them (pkg/), alternated, in separate
# processes; then the sm90 forward test suites and memcheck on the cross-tile tests.
# No background jobs: a bare `wait` would also wait for the tee below.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
for round in 1 2; do
  for kit in pkg qring/pkg; do
    echo "== $kit, round $round"
    PYTHONPATH=$PWD/$D/$kit timeout -k 5 90 python3 $D/cross_profile.py sdxl-cross sd15-cross-64 vit-b16-224 2>&1 | grep -v Warn
  done
done
echo "== GPU tests (qring)"
OMP_NUM_THREADS=16 timeout -k 5 200 $D/qring/flashvision_gpu_tests --gtest_filter='*Sm90*:*GpuFwdSplit*' --gtest_brief=1 > $OUT/tests-qring.txt 2>&1
echo "rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]" $OUT/tests-qring.txt
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $D/qring/flashvision_gpu_tests --gtest_filter='*GpuSm90CrossTile.ManyTilesPerCta*:*TextTokens/bf16*' --gtest_brief=1 2>&1 | tail -2
timeout -k 5 100 compute-sanitizer --tool racecheck --error-exitcode 9 $D/qring/flashvision_gpu_tests --gtest_filter='*GpuSm90CrossTile.ManyTilesPerCta/bf16*' --gtest_brief=1 2>&1 | tail -2
