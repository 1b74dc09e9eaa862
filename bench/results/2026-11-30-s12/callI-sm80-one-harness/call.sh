#!/bin/bash
# Session 12 call I: FLASHVISION_CUDA_KERNEL (GPU test), then the sm80 kernels against FA2 in one
# harness: python -m flashvision.bench --kernel sm80 --backward on the D=64 sweep and four image
# cases (issue 3).
D=.devbin/s12i
exec > >(tee $OUT/log.txt) 2>&1
timeout 60 $D/flashvision_gpu_tests --gtest_filter='*KernelVariable*:*GpuFeatures.SoftmaxScale*:GpuSm90Dispatch.*' 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) " | cut -c1-120
pip install -q --no-deps --target /tmp/fvc $D/*.whl 2>&1 | grep -v WARNING
CASES="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case sdxl-self-128 --case dit-xl2-512"
PYTHONPATH=/tmp/fvc${PYTHONPATH:+:$PYTHONPATH} timeout 200 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --backward --budget 0.3 $CASES --json $OUT/sm80.json > $OUT/sm80.txt 2>&1
echo "rc=$?"; grep -E "flashvision |sdpa-" $OUT/sm80.txt | grep -v "^flashvision" | awk '{print $1, $2, $3, $4, $5, $6}'
