#!/usr/bin/env bash
# Session 20, device call 13: 128-key blocks at D = 128 (branch wip/sm90-d128-n128, kit n128:
# fwd_tile(128) = 128 x 128, 2 stages, instead of 128 x 176) against main (kit main) on the D = 128
# cases with cuDNN, processes alternated main n128 n128 main. Everything but log.txt goes into
# results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res13; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
for k in main n128; do
  tar xJf .devbin/s20/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
CASES="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048 --case video-49f-720p"
n=0
for k in main n128 n128 main; do
  n=$((n+1)); use $k
  timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 $CASES \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5, $9, $10}' | paste -sd' '
  save
done
