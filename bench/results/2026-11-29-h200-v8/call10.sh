#!/usr/bin/env bash
# Session 6, call 10: branch wip/sm80-bwd-d512 (the sm80 backward for head dims up to 512) with the
# helper's script: its tests, a D=64 smoke, memcheck and racecheck, vae-mid-512 fwd+bwd.
set -uo pipefail
O=/tmp/o10; mkdir -p $O
trap 'tar czf $OUT/call10.tgz -C $O . 2>/dev/null' EXIT
OUT2=$OUT
OUT=$O/d512 bash .devbin/sm80-bwd-d512/call.sh > $O/d512.log 2>&1
cp $O/d512/summary.txt $OUT2/summary.txt
