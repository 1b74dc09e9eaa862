#!/usr/bin/env bash
# Device call 10: causal against non-causal on the long self-attention cases, sm90 forward and
# sm80 forward+backward (flashvision only: the peer scripts have no causal mode yet).
set -uo pipefail
O=/tmp/o10; mkdir -p $O
B=.devbin/main/flashvision
C="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case flux-1024 --case video-49f-720p"
for mode in noncausal causal; do
  flag=""; [ $mode = causal ] && flag="--causal"
  timeout 120 $B bench --device cuda $flag --backward --no-naive --budget 0.15 $C \
    --json $O/${mode}_auto.json > $O/${mode}_auto.log 2>&1
  echo "$mode auto rc=$?"
done
tar czf $OUT/call10.tgz -C $O .
