#!/usr/bin/env bash
# Prepared in session 22 for the next session's first call (not run): both long widths at D = 128
# (branch wip/sm90-d128-widths at a7f5867, kit widths: 176 or 192 keys, whichever key_blocks_cost
# says pads less): the new and affected GPU tests, the D = 128 cases alternated land widths widths
# land (0.1 s a measurement), then memcheck on the new test.
# carry: [".devbin/s22/kit-land.tar.xz", ".devbin/s22/kit-widths.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res8; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
for k in land widths; do
  tar xJf .devbin/s22/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use widths
T=/tmp/kit-widths/bin/flashvision_gpu_tests
timeout -k 5 60 $T --gtest_filter='*SecondLongWidth*:*ScoresRisingFar*:*GpuSm90CrossTile*:Sm90*' > $R/gtests.txt 2>&1
echo "== gtests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $R/gtests.txt | sort -u | head; save
cases="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048 --case video-49f-720p"
n=0
for k in land widths widths land; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.1 $cases \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  grep -E " flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
use widths
timeout -k 5 40 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='*SecondLongWidth*/bf16' > $R/memcheck.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck.txt; save
