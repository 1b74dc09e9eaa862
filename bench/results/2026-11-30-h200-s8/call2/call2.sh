#!/usr/bin/env bash
# Session 8, call 2: the sm80 forward K/V modes of branch wip/sm80-fwd-loader3 (its call.sh:
# main's CLI against the branch's in each FLASHVISION_SM80_FWD_KV mode, D = 256 and D = 128,
# two rounds); outputs tarred (a call returns 8 files).
export OUT_FINAL=$OUT
mkdir -p /tmp/l3out
trap 'tar czf $OUT_FINAL/call2.tgz -C /tmp/l3out . 2>/dev/null; cp /tmp/l3out/summary.txt $OUT_FINAL/ 2>/dev/null' EXIT
OUT=/tmp/l3out bash .devbin/sm80-fwd-loader3/call.sh
