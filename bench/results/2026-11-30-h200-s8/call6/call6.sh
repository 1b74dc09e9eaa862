#!/usr/bin/env bash
# Session 8, call 6: branch wip/sm80-fwd-swizzle2 (the swizzled K/V layout at buckets 64 and 128,
# one address register a lane), FLASHVISION_SM80_FWD_KV=padded against swizzled in one binary
# (static CLI, buckets 64/128/256, sm_90a), sm80 forward, alternated twice.
set -uo pipefail
O=/tmp/s8o6; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call6.tgz -C $O . 2>/dev/null' EXIT
C="--case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-2048 --case video-49f-720p --case flux-1024 --case sdxl-self-128 --case sweep-d64-n4096 --case sweep-d64-n16384 --case vit-l14-336 --case sweep-d256-n4096"
for r in 1 2; do for m in padded swizzled; do
  FLASHVISION_SM80_FWD_KV=$m timeout -k 5 100 .devbin/swz2/flashvision bench --device cuda --kernel sm80 --no-naive --budget 0.2 $C \
    --json $O/$m-$r.json > $O/$m-$r.log 2>&1
  echo "== $m $r rc=$?" | tee -a $S
  grep -E "^\S+ +\S+ +flashvision" $O/$m-$r.log | awk '{print $1, $4, $5, $6, $7, $8, $10}' | tee -a $S
done; done
