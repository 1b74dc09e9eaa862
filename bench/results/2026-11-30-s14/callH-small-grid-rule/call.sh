#!/bin/bash
# Session 14 call H (kit g/ rebuilt: the small-grid tile only where callG measured it faster):
# the tile-variant tests with the new small-grid test, memcheck on it, and the sm80 forward on
# the callG shapes (CUDA graphs, once).
D=.devbin/s14
G=$D/g
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$G/pkg
OMP_NUM_THREADS=16 timeout -k 5 100 $G/flashvision_gpu_tests --gtest_filter='*FwdTileVariants*:FwdSmallGrid*:FwdKvSwizzle*' --gtest_brief=1 > $OUT/tests.txt 2>&1
echo "rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]" $OUT/tests.txt
timeout -k 5 70 compute-sanitizer --tool memcheck --error-exitcode 9 $G/flashvision_gpu_tests --gtest_filter='*GpuFwdTileVariants.SmallGridTileMatchesTheReference/bf16*' --gtest_brief=1 2>&1 | tail -2
B="python3 -m flashvision.bench --device cuda --budget 0.3 --cuda-graphs --kernel sm80 --impl flashvision --impl sdpa-flash"
timeout -k 5 50 $B --case sd15-self-32 --shape 1,8,1024,1024,80 --shape 2,8,1024,1024,64 --shape 2,5,1024,1024,128 --json $OUT/bench.json 2>&1 | grep -E "^(sd|shape)"
