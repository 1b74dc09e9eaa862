#!/usr/bin/env bash
# Session 7, call 11: the sm80 backward's warp roles and tile variant at head dims <= 96 now that
# dQ goes into tiles (main's binary of call 9): FLASHVISION_SM80_BWD_SDP shared (the default
# there) / groups / split, and FLASHVISION_SM80_BWD_TILE=1 (two query slots, 64 rows) against the
# default variant 2 (128 rows), sm80 kernels for both passes, two rounds.
set -uo pipefail
O=/tmp/s7o11; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call11.tgz -C $O . 2>/dev/null' EXIT
B=.devbin/sm80-bwd-stalls/flashvision
C="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --case vit-l14-336 --case sd15-self-32 --case dit-xl2-512 --case sd15-self-64"
for r in 1 2; do
  for v in shared groups split tile1; do
    case $v in tile1) E="FLASHVISION_SM80_BWD_TILE=1";; *) E="FLASHVISION_SM80_BWD_SDP=$v";; esac
    timeout -k 5 60 env $E $B bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.2 $C \
      --json $O/$v-$r.json > $O/$v-$r.log 2>&1
    echo "== $v $r rc=$?" | tee -a $S
    grep -E "^\S+ +\S+ +flashvision .*fwd\+bwd" $O/$v-$r.log | awk '{print $1, $6, $7, $8}' | tee -a $S
  done
done
