#!/usr/bin/env bash
# Session 32, call 1 (session 31 call 5, as prepared). Kits: e (the landed kernels, as in call 4) and n (wip/sm90-text-no-turns on
# main: the text width's cross-tile kernels issue their GEMMs without the consumers' turns).
# 1. SD 1.5 and SDXL cross-attention, kits e, n, n, e, e, n.
# 2. The cross-tile, wide-tile and Q-buffer GPU gtests on kit n.
# carry: [".devbin/s31"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-e kit-n; do
  tar xJf .devbin/s31/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3"
n=0
for K in kit-e kit-n kit-n kit-e kit-e kit-n; do
  n=$((n + 1)); use $K
  timeout -k 5 40 $B --case sd15-cross-64 --case sdxl-cross --json $R/turns-$n-$K.json > $R/turns-$n-$K.txt 2>&1
  echo "== turns $n $K rc=$? $(el)"; grep -E "^sd" $R/turns-$n-$K.txt
done
save
use kit-n
timeout -k 5 150 /tmp/kit-n/bin/flashvision_gpu_tests --gtest_filter='*WideTile*:*CrossTile*:*QBuffers*' > $R/gtests-n.txt 2>&1
echo "== kit-n tests rc=$? $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-n.txt | head -20
echo "$(el) done"; save
