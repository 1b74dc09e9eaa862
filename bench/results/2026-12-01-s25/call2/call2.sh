#!/usr/bin/env bash
# Session 25, call 2: which multicast shapes hang (call 1's GpuSm90KvMulticast.EveryTileWithTheKernel
# ran past 150 s): one process per shape with FLASHVISION_SM90_FWD_MULTICAST=1, under a timeout.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s25/kit-mc.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-mc && cp -r python/flashvision /tmp/pkg-mc/ && cp /tmp/kit-mc/python/_C*.so /tmp/pkg-mc/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-mc LD_LIBRARY_PATH=/tmp/kit-mc FLASHVISION_SM90_FWD_SPLIT=0
run() { echo "== $*"; timeout -k 2 25 python3 .devbin/s25/diag.py "$@"; echo "rc=$?"; }
export FLASHVISION_SM90_FWD_MULTICAST=1 FLASHVISION_SM90_FWD_ROWS=128
run 2 256 250 2 128
for d in 32 40 64 72 96 120 160 192 256; do run 1 200 900 2 $d; done
run 2 256 1768 2 128
run 2 256 905 2 64
FLASHVISION_SM90_FWD_ROWS=192 run 1 300 900 2 64
run 4 4096 4096 16 128
FLASHVISION_SM90_FWD_MULTICAST=0 run 4 4096 4096 16 128
