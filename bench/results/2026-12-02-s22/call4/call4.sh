#!/usr/bin/env bash
# Session 22, call 4: the new ramp tests (score_ramps.h; the Hopper forward's wide tiles, short
# key widths, buckets 160 and 192) built at 4cc05c4, run against main's library as landed (kit land,
# ac6a38f: the tests commit changes no library code); then memcheck on the wide tiles' ramps.
# carry: [".devbin/s22/kit-land.tar.xz", ".devbin/s22/kit-ramps.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s22/kit-land.tar.xz -C /tmp && tar xJf .devbin/s22/kit-ramps.tar.xz -C /tmp || exit 1
export LD_LIBRARY_PATH=/tmp/kit-land
T=/tmp/kit-ramps/bin/flashvision_gpu_tests
timeout -k 5 300 $T --gtest_filter='*ScoresRising*' > $OUT/ramps.txt 2>&1
echo "== ramps rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  FAILED" $OUT/ramps.txt | sed 's/ ([0-9]* ms)//' | sort | uniq -c | sort -rn | head -40
timeout -k 5 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*GpuSm90WideTiles.ScoresRising*/bf16:*GpuSm90KeyBlocks.ScoresRising*/bf16' > $OUT/memcheck.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $OUT/memcheck.txt
