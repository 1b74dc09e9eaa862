#!/bin/bash
# Session 13 call C (call B ran the whole GPU test binary in 8 parallel shards whose float64
# references oversubscribed the 16 cores and passed the call's limit): the tests of both changes
# by filter, two processes of 8 threads; memcheck on the text width; the cross cases kernel by
# kernel and in the Python bench against cuDNN and FA2; the sm80 kernels against FA2 at D = 64.
D=.devbin/s13
exec > >(tee $OUT/log.txt) 2>&1
export OMP_NUM_THREADS=8
echo "== GPU tests: sm90 text width / key blocks / cross tile; sm80 backward tiles, D = 512, options"
timeout -k 5 150 $D/flashvision_gpu_tests --gtest_filter='*Sm90KeyBlock*:*Sm90CrossTile*:*Sm90WideTile*' > $OUT/tests-sm90.txt 2>&1 &
timeout -k 5 150 $D/flashvision_gpu_tests --gtest_filter='*GpuBwdTileVariants*:*GpuBwdHeadDim512*:*GpuBwdOptions*:*BwdQuerySwizzle*:*BwdTileVariant*' > $OUT/tests-bwd.txt 2>&1 &
wait
for f in tests-sm90 tests-bwd; do echo "-- $f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test|tests from .* ran' $OUT/$f.txt | tr '\n' ' ')"; grep "^\[  FAILED  \] Cuda" $OUT/$f.txt | head; done
echo "== memcheck TextTokens"
timeout -k 5 60 compute-sanitizer --tool memcheck --error-exitcode 9 $D/flashvision_gpu_tests --gtest_filter='*GpuSm90KeyBlocks.TextTokens/bf16*' --gtest_brief=1 2>&1 | tail -2
export PYTHONPATH=$PWD/$D/pkg${PYTHONPATH:+:$PYTHONPATH}
echo "== cross cases kernel by kernel"
timeout -k 5 60 python3 $D/cross_profile.py sdxl-cross sd15-cross-64
echo "== Python bench, forward"
timeout -k 5 90 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --budget 0.3 --case sdxl-cross --case sd15-cross-64 --case vit-b16-224 --json $OUT/fwd.json > /tmp/f.txt 2>&1
grep -E "^(sdxl|sd15|vit)" /tmp/f.txt
echo "== Python bench, sm80 against FA2, fwd+bwd"
timeout -k 5 100 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --backward --budget 0.3 --case sweep-d64-n4096 --case sdxl-self-128 --case sweep-d64-n16384 --json $OUT/sm80-fa2.json > /tmp/p.txt 2>&1
grep -E "fwd\+bwd" /tmp/p.txt
