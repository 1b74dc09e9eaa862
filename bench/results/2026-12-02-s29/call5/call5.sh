#!/usr/bin/env bash
# Session 29, call 5 (experiment, not landed): is the FP8 kernel's own transposition of V slow on
# long sequences for want of staging slots? Kit e (fdc1eea with kit-e.diff, here): the kernels
# that transpose V get 4 staging slots at D = 64 and 3 at D = 128 (with 2 K/V stages there instead
# of 3), against the landing kit h2's 2 slots; both forced to transpose in the kernel
# (FLASHVISION_SM90_FP8_VALUES=kernel), alternated, and h2 with the pass for reference. Only the
# Python extension was built for kit e.
# carry: [".devbin/s29"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-h2 kit-e; do
  tar xJf .devbin/s29/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
CASES="--case vit-b16-224 --case vit-l14-336 --case flux-2048"
for c in d64-n4096 d64-n16384 d128-n4096 d128-n16384; do CASES="$CASES --case sweep-$c"; done
i=0
for run in kit-h2:kernel kit-e:kernel kit-e:kernel kit-h2:kernel kit-h2:pass; do
  i=$((i+1)); K=${run%:*}; M=${run#*:}; use $K
  FLASHVISION_SM90_FP8_VALUES=$M timeout -k 5 40 python3 -m flashvision.bench --impl flashvision-fp8 \
    $CASES --cuda-graphs --budget 0.2 --json $R/r$i-$K-$M.json > $R/r$i-$K-$M.txt 2>&1
  echo "== round $i $K $M rc=$? $(el)"; grep "flashvision-fp8 fwd" $R/r$i-$K-$M.txt | cut -c1-90
done
tar czf "$OUT/results.tgz" -C $R .
echo "$(el) done"
