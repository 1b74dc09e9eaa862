#!/usr/bin/env bash
# Session 20, device call 6: branch wip/amx-prefetch + FLASHVISION_SCRATCH_AMX_SKIP (kit skip):
# the AMX forward's steps left out in turn (cpu_skip.py), alternated in one process.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res6; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
tar xJf .devbin/s20/kit-skip.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-skip && cp -r python/flashvision /tmp/pkg-skip/ && cp /tmp/kit-skip/python/_C*.so /tmp/pkg-skip/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-skip LD_LIBRARY_PATH=/tmp/kit-skip
timeout -k 5 300 python3 bench/results/2026-11-30-s20/call6-skip/cpu_skip.py > $R/cpu_skip.txt 2>&1; echo "skip rc=$?"; cat $R/cpu_skip.txt
save
