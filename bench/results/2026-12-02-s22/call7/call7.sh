#!/usr/bin/env bash
# Session 22, call 7: 192-key blocks at D = 128 (branch wip/sm90-d128-n192, kit n192: Q and two
# K/V stages fill 225 KiB, so O is stored directly, not staged) against main as landed (kit land):
# the D = 128 GPU tests and ramps on the kit, then the D = 128 cases alternated land n192 n192
# land, 0.2 s a measurement.
# carry: [".devbin/s22/kit-land.tar.xz", ".devbin/s22/kit-n192.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res7; mkdir -p $R
for k in land n192; do
  tar xJf .devbin/s22/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use n192
timeout -k 5 100 /tmp/kit-n192/bin/flashvision_gpu_tests --gtest_filter='*ScoresRising*:*Sm90*CrossTile*:Cuda/GpuFwdSplit.*:Sm90FwdSplit.*' > $R/gtests-n192.txt 2>&1
echo "== gtests rc=$?"; grep -E "^\[  (PASSED|FAILED) " $R/gtests-n192.txt | sort | uniq -c | head -20
cases="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048 --case video-49f-720p"
n=0
for k in land n192 n192 land; do
  n=$((n+1)); use $k
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 $cases \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  grep -E " flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5, $6}' | paste -sd' '
done
tar czf "$OUT/results.tgz" -C $R .
