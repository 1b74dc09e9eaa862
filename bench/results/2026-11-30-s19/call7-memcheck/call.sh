#!/usr/bin/env bash
# Session 19, device call 7: compute-sanitizer memcheck on the GPU tests of this session's new
# paths (the split of each 256-column launch above D = 256, text keys at bucket 48) with the
# candidate's build (kit-cand, the GPU code merged on main).
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s19/kit-cand.tar.xz -C /tmp || exit 1
export LD_LIBRARY_PATH=/tmp/kit-cand
for f in 'GpuSm90Dispatch.HeadDimsAbove256*' 'Cuda/GpuSm90KeyBlocks.TextTokens/bf16'; do
  timeout -k 5 250 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-cand/bin/flashvision_gpu_tests --gtest_filter="$f" > /tmp/san.txt 2>&1
  echo "== memcheck $f rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) |OK \]|FAILED \]" /tmp/san.txt | head -12
done
