#!/usr/bin/env bash
# sm80 forward K/V loader, third attempt (branch wip/sm80-fwd-loader3): main's CLI (base/) against
# this branch's CLI (bin/) in each K/V mode (FLASHVISION_SM80_FWD_KV), D = 256 sweep plus D = 128
# as a control (its kernel is unchanged), two rounds, then the new GPU tests if the test binary is
# there. H: the folder holding bin/ and base/ (this folder, copied to the device).
set -uo pipefail
H=${H:-.devbin/sm80-fwd-loader3}; O=${OUT:-/tmp/l3out}; mkdir -p $O; S=$O/summary.txt
CF="--case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d128-n4096"
for r in 1 2; do
  for v in base padded swizzled lines lines-early; do
    bin=$H/bin/flashvision; [ $v = base ] && bin=$H/base/flashvision
    FLASHVISION_SM80_FWD_KV=$([ $v = base ] && echo "" || echo $v) timeout -k 5 60 $bin bench \
      --device cuda --kernel sm80 --no-naive --budget 0.2 $CF --json $O/$v-$r.json > $O/$v-$r.log 2>&1
    echo "$v round $r rc=$?" | tee -a $S
    grep -E "^\S+ +\S+ +flashvision" $O/$v-$r.log | awk '{print "  ", $1, $6, $7, $8}' | tee -a $S
  done
done
if [ -x $H/flashvision_gpu_tests ]; then
  timeout -k 5 120 $H/flashvision_gpu_tests --gtest_filter='*FwdTileVariant*:*FwdKvSwizzle*:*GpuFwdTileVariants*' \
    > $O/tests-fwd-tiles.log 2>&1; echo "fwd tile/KV tests rc=$?" | tee -a $S
  tail -3 $O/tests-fwd-tiles.log | tee -a $S
fi
