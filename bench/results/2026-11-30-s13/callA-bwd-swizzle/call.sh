#!/bin/bash
# Session 13 call A: (1) GPU tests of the sm80 backward with swizzled Q/dO tiles (branch
# wip/sm80-bwd-swizzle, head dims 64/128/256/512, sm_90a) and memcheck/racecheck on a subset;
# (2) main's CLI against the branch's, sm80 forward + backward, alternated; (3) the branch's wheel
# against SDPA's FA2 in the Python bench, both passes on the sm80 kernels; (4) the cross-attention
# cases kernel by kernel under torch.profiler.
D=.devbin/s13
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== GPU tests (sm80 backward suites)"
timeout 300 $D/flashvision_gpu_tests --gtest_filter='*GpuBwd*:*GpuSplitBackward*:*GpuSweep*:*GpuVsCpu*:*Deterministic*:*GpuFeatures*:*BwdTileVariant*:*BwdQuerySwizzle*' --gtest_brief=1 > $OUT/tests.txt 2>&1
echo "rc=$?"; grep -E "PASSED|FAILED|SKIPPED \[" $OUT/tests.txt | tail -25
echo "== memcheck / racecheck (GpuSanitize)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $D/flashvision_gpu_tests --gtest_filter='*GpuSanitize*' --gtest_brief=1 2>&1 | tail -3
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $D/flashvision_gpu_tests --gtest_filter='*GpuSanitize*' --gtest_brief=1 2>&1 | tail -3
echo "== sm80 fwd+bwd, main (base) against the branch (swz), alternated"
CASES="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --case vit-l14-336 --case sweep-d128-n4096 --case flux-1024 --case sweep-d256-n4096"
for bin in base swz base swz; do
  timeout 100 $D/fv-$bin bench --device cuda --no-naive --budget 0.6 --kernel sm80 --backward --backward-kernel sm80 $CASES > /tmp/b.txt 2>&1
  echo "-- $bin"; grep flashvision /tmp/b.txt | grep -v "^flashvision" | awk '{print $1, $5, $6, $7, $8}'
done
pip install -q --no-deps --target /tmp/fv $D/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/fv${PYTHONPATH:+:$PYTHONPATH}
echo "== Python bench: the branch's sm80 kernels against FA2 (fwd+bwd)"
timeout 200 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --backward --budget 0.3 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --case vit-l14-336 --case vit-b16-224 --case sweep-d128-n4096 --json $OUT/sm80-fa2.json > /tmp/p.txt 2>&1
tail -30 /tmp/p.txt
echo "== cross-attention kernel by kernel"
timeout 120 python3 $D/cross_profile.py
