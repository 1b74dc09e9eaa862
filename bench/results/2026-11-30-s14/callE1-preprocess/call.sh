#!/bin/bash
# Session 14 call E1: main + the row-fast backward preprocess (kit e/: package and GPU tests,
# head dims 48-512): the fwd+bwd kernel profile of callD again, the host's time per call, the
# backward GPU tests, the CUDA Python tests with the CUDA-graph tests.
D=.devbin/s14
E=$D/e
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$E/pkg
echo "== bwd profile"
timeout -k 5 120 python3 $D/bwd_profile.py 2>&1 | grep -v -i warn > $OUT/bwd-profile.txt
grep -E "^[a-z]|preprocess" $OUT/bwd-profile.txt
echo "== host profile"
timeout -k 5 90 python3 $D/host_profile.py > $OUT/host-profile.txt 2>&1
head -45 $OUT/host-profile.txt
echo "== GPU tests"
OMP_NUM_THREADS=16 timeout -k 5 130 $E/flashvision_gpu_tests --gtest_filter='*SmallHeadDims*:*GpuBwdHeadDim512*:*Varlen*:*GpuBwdTileVariants*' --gtest_brief=1 > $OUT/tests.txt 2>&1
echo "rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]" $OUT/tests.txt
echo "== python CUDA tests"
timeout -k 5 100 python3 -m pytest tests/python/test_cuda_graphs.py tests/python/test_cuda.py -q -p no:cacheprovider > $OUT/pytest.txt 2>&1
echo "rc=$?"; tail -3 $OUT/pytest.txt
