#!/usr/bin/env bash
# Session 8, call 1: the Hopper forward with O's rescale between the Q K^T and P V issues
# (branch wip/sm90-rescale-order, CLI built for buckets 48/64/80/128/256) against main's binary,
# automatic kernels (sm90 forward), forward only, alternated twice.
set -uo pipefail
O=/tmp/s8o1; mkdir -p $O; S=$OUT/gpu-summary.txt
trap 'tar czf $OUT/call1.tgz -C $O . 2>/dev/null' EXIT
C="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case sweep-d256-n16384 --case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-self-32 --case sdxl-self-128 --case dit-xl2-512 --case flux-1024 --case flux-2048"
for r in 1 2; do
  for v in main rescale; do
    case $v in main) B=.devbin/sm80-bwd-stalls/flashvision;; rescale) B="env LD_LIBRARY_PATH=.devbin/sm90-rescale .devbin/sm90-rescale/flashvision";; esac
    timeout -k 5 100 $B bench --device cuda --no-naive --budget 0.2 $C --json $O/$v-$r.json > $O/$v-$r.log 2>&1
    echo "== $v $r rc=$?" | tee -a $S
    grep -E "^\S+ +\S+ +flashvision" $O/$v-$r.log | awk '{print $1, $4, $5, $6, $7, $8, $10}' | tee -a $S
  done
done
