#!/usr/bin/env bash
# Session 31, call 3. Kits: t (wip/sm90-wide-text: the wide tile at the text width; its kernels are
# those of the landing build) and e (wip/sm90-softmax-ilp at 776085d on t: a row's first key block
# takes its exponents before its exponentials and its sums and maxes in two interleaved parts).
# 1. Kits t and e alternated (t, e, e, t) on the one- to three-block image cases.
# 2. Every case with flashvision (kit t) beside cuDNN and FA2.
# carry: [".devbin/s31"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-t kit-e; do
  tar xJf .devbin/s31/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
C="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case dit-xl2-512 --case sd15-cross-64 --case sdxl-cross"
n=0
for K in kit-t kit-e kit-e kit-t; do
  n=$((n + 1)); use $K
  timeout -k 5 70 $B $C --json $R/exact-$n-$K.json > $R/exact-$n-$K.txt 2>&1
  echo "== exact $n $K rc=$? $(el)"; grep -E "^[a-z].*flashvision " $R/exact-$n-$K.txt
done
save
use kit-t
timeout -k 5 200 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
