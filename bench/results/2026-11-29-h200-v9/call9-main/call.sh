#!/usr/bin/env bash
# Session 7, call 9: main's GPU code (the binary of branch wip/sm80-bwd-stalls as merged: main's
# forward objects and the tiled-dQ backward; its whole test binary passed in call 5) on every
# BENCH.md case, sm80 kernels for both passes and the automatic kernels, next to SDPA's FA2 and
# cuDNN in the same call.
set -uo pipefail
O=/tmp/s7bench; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/bench.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/sm80-bwd-stalls
timeout -k 5 130 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.2 --case all \
  --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
timeout -k 5 110 $B/flashvision bench --device cuda --backward --no-naive --budget 0.2 --case all \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.2 --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
