#!/usr/bin/env bash
# Session 31, call 1. Kits: t (wip/sm90-wide-text: the wide tile at the text width; every bucket,
# with the GPU gtests), p4 and p2 (wip/sm90-poly-exp on t: every 4th / 2nd 8-column tile's
# exponentials on the FMA pipe, buckets 48, 64 and 80 only).
# 1. The wide text tile's gtests (and the cross-tile and Q-buffer suites) on kit t.
# 2. SD 1.5 and SDXL cross-attention on kit t with 192 rows (auto) and 128 (forced), alternated.
# 3. The D <= 80 cases on kits t, p4, p2, alternated (t, p4, p2, p2, p4, t).
# 4. Nsight Compute's source view (SASS with stall samples) of ViT-L/14's kernel on kits t and p4.
# carry: [".devbin/s31"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-t kit-p4 kit-p2; do
  tar xJf .devbin/s31/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
use kit-t
T=/tmp/kit-t/bin/flashvision_gpu_tests
timeout -k 5 120 $T --gtest_filter='*WideTile*:*CrossTile*:*QBuffers*' > $R/gtests-new.txt 2>&1
echo "== new tests rc=$? $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-new.txt | head -20
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
for rep in 1 2; do
  for rows in auto 128; do
    if [ $rows = auto ]; then unset FLASHVISION_SM90_FWD_ROWS; else export FLASHVISION_SM90_FWD_ROWS=$rows; fi
    timeout -k 5 40 $B --case sd15-cross-64 --case sdxl-cross --json $R/text-$rep-$rows.json > $R/text-$rep-$rows.txt 2>&1
    echo "== text $rep rows=$rows rc=$?"; grep -E "^(sd)" $R/text-$rep-$rows.txt
  done
done
unset FLASHVISION_SM90_FWD_ROWS
echo "$(el) text done"; save
C="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-self-32 --case sdxl-self-128 --case dit-xl2-512 --case sweep-d64-n4096 --case sd15-cross-64 --case sdxl-cross"
n=0
for K in kit-t kit-p4 kit-p2 kit-p2 kit-p4 kit-t; do
  n=$((n + 1)); use $K
  timeout -k 5 70 $B $C --json $R/poly-$n-$K.json > $R/poly-$n-$K.txt 2>&1
  echo "== poly $n $K rc=$? $(el)"; grep -E "^[a-z].*flashvision " $R/poly-$n-$K.txt
done
save
for K in kit-t kit-p4; do
  use $K
  timeout -k 5 120 ncu --set full --import-source no -k regex:fwd_kernel --launch-skip 3 --launch-count 1 \
    -o /tmp/ncu-$K python3 bench/results/2026-12-02-s31/call1/one_call.py flashvision 64 16 577 577 64 > $R/ncu-$K.txt 2>&1
  echo "== ncu $K rc=$? $(el)"
  ncu --import /tmp/ncu-$K.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $R/sass-vitl-$K.csv.gz
  ncu --import /tmp/ncu-$K.ncu-rep --page details > $R/details-vitl-$K.txt 2>&1
  grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" $R/details-vitl-$K.txt | head -6
  save
done
echo "$(el) done"; save
