#!/usr/bin/env bash
# Session 28, call 4: the layout of the FP8 forward's transposed V, A/B. kit-fp8a = wip/sm90-fp8
# (contiguous panels of 64 or 128 keys, the layout of calls 2 and 3); kit-fp8rows = rows of all
# keys (call 1's layout) with FLASHVISION_FP8_ROW_PAD bytes of padding a row (0: call 1). The FP8
# gtests on the padded rows, then the FP8 row of the long cases, the variants alternated twice.
# carry: [".devbin/s28"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-fp8a kit-fp8rows; do
  tar xJf .devbin/s28/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
FLASHVISION_FP8_ROW_PAD=32 LD_LIBRARY_PATH=/tmp/kit-fp8rows timeout -k 5 100 /tmp/kit-fp8rows/bin/flashvision_gpu_tests --gtest_filter='*Fp8*' > $R/gtests-rows32.txt 2>&1
echo "== fp8 tests, rows padded by 32: rc=$? $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-rows32.txt | head
save
CASES="--case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048 --case video-49f-720p --case sweep-d256-n16384 --case sweep-d64-n16384 --case vit-b16-224"
run() {  # label kit pad
  FLASHVISION_FP8_ROW_PAD=$3 PYTHONPATH=/tmp/pkg-$2 LD_LIBRARY_PATH=/tmp/$2 timeout -k 5 90 python3 -m flashvision.bench --device cuda \
    --impl flashvision-fp8 --cuda-graphs --budget 0.2 $CASES --json $R/ab-$1.json > $R/ab-$1.txt 2>&1
  echo "== $1 rc=$? $(el)"; grep -E "^[a-z].*flashvision-fp8" $R/ab-$1.txt | awk '{print $1, $4, $5, $6}'
}
for rep in 1 2; do
  run $rep-panels kit-fp8a 0
  run $rep-rows0 kit-fp8rows 0
  run $rep-rows32 kit-fp8rows 32
  run $rep-rows128 kit-fp8rows 128
  save
done
echo "$(el) done"; save
