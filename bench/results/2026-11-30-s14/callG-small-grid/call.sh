#!/bin/bash
# Session 14 call G (kit g/: main + the sm80 forward's small-grid tile, variant 2): its tests
# (tile variants, memcheck, racecheck), then the sm80 forward with it (default) and without it
# (FLASHVISION_SM80_FWD_TILE=1) on grids of at most one CTA per SM, alternated, CUDA-graph timing.
D=.devbin/s14
G=$D/g
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$G/pkg
echo "== GPU tests"
OMP_NUM_THREADS=16 timeout -k 5 120 $G/flashvision_gpu_tests --gtest_filter='*FwdTileVariants*:FwdSmallGrid*:FwdKvSwizzle*' --gtest_brief=1 > $OUT/tests.txt 2>&1
echo "rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]" $OUT/tests.txt
timeout -k 5 60 compute-sanitizer --tool memcheck --error-exitcode 9 $G/flashvision_gpu_tests --gtest_filter='*GpuFwdTileVariants.EveryVariantMatchesTheReference/bf16*' --gtest_brief=1 2>&1 | tail -2
timeout -k 5 60 compute-sanitizer --tool racecheck --error-exitcode 9 $G/flashvision_gpu_tests --gtest_filter='*GpuFwdTileVariants.EveryVariantMatchesTheReference/bf16*' --gtest_brief=1 2>&1 | tail -2
B="python3 -m flashvision.bench --device cuda --budget 0.3 --cuda-graphs --kernel sm80 --impl flashvision --impl sdpa-flash"
S="--case sd15-self-32 --case sd15-self-16 --case sdxl-cross --shape 1,8,1024,1024,80 --shape 2,8,1024,1024,64 --shape 2,5,1024,1024,128 --shape 1,10,4096,4096,64"
for round in 1 2; do
  for cap in 1 2; do
    echo "== round $round, FLASHVISION_SM80_FWD_TILE=$cap"
    FLASHVISION_SM80_FWD_TILE=$cap timeout -k 5 50 $B $S --json $OUT/cap$cap-r$round.json 2>&1 | grep -E "^(sd|shape|[0-9])"
  done
done
