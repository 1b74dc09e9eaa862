#!/usr/bin/env bash
# Session 25, call 3: the D = 32 multicast hang of call 2, narrowed: the same shape without
# multicast, other key and query counts, f16, and under compute-sanitizer.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s25/kit-mc.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-mc && cp -r python/flashvision /tmp/pkg-mc/ && cp /tmp/kit-mc/python/_C*.so /tmp/pkg-mc/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-mc LD_LIBRARY_PATH=/tmp/kit-mc FLASHVISION_SM90_FWD_SPLIT=0 FLASHVISION_SM90_FWD_ROWS=128
run() { echo "== mc=$FLASHVISION_SM90_FWD_MULTICAST $*"; timeout -k 2 20 python3 .devbin/s25/diag.py "$@"; echo "rc=$?"; }
export FLASHVISION_SM90_FWD_MULTICAST=0
run 1 200 900 2 32
export FLASHVISION_SM90_FWD_MULTICAST=1
run 1 200 1024 2 32
run 1 200 256 2 32
run 1 200 129 2 32
run 1 128 900 2 32
run 1 256 900 2 32
run 4 4096 4096 16 32
run 1 200 900 2 24
timeout -k 2 60 compute-sanitizer --tool memcheck python3 .devbin/s25/diag.py 1 200 900 2 32 2>&1 | tail -5; echo "memcheck rc=$?"
timeout -k 2 60 compute-sanitizer --tool synccheck python3 .devbin/s25/diag.py 1 200 256 2 32 2>&1 | tail -5; echo "synccheck rc=$?"
