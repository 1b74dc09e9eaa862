#!/usr/bin/env bash
# Session 20, device call 7: O stored straight from the accumulators at every sm90 bucket
# (branch wip/sm90-direct-epilogue, kit direct) against main (kit main, staged O at buckets other
# than 64, 256 and 512), processes alternated main direct direct main, flashvision and cuDNN on
# the cases whose bucket stages O (and two bucket-64 controls). Everything but log.txt goes into
# results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res7; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
for kit in main direct; do
  tar xJf .devbin/s20/kit-$kit.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$kit && cp -r python/flashvision /tmp/pkg-$kit/ && cp /tmp/kit-$kit/python/_C*.so /tmp/pkg-$kit/flashvision/
done
CASES="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case vit-h14-224 --case sd15-self-32 --case dit-xl2-512 --case sd15-self-16 --case sd15-self-64 --case sweep-d64-n1024 --case vit-l14-336"
i=0
for kit in main direct direct main; do
  i=$((i+1))
  PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-$kit LD_LIBRARY_PATH=/tmp/kit-$kit timeout -k 5 120 \
    python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 $CASES \
    --json $R/$i-$kit.json > $R/$i-$kit.txt 2>&1; echo "$i $kit rc=$?"
  grep "flashvision " $R/$i-$kit.txt | awk '{print $1, $4, $5}' | paste -sd' ' 
done
save
