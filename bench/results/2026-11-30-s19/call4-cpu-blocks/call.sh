#!/usr/bin/env bash
# Session 19, device call 4: the CPU AMX forward's key blocks on the longer cases
# (FLASHVISION_CPU_AMX_BLOCKS with each case's own query rows), alternated in one process against
# torch's CPU SDPA. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-blocks.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-blocks && cp -r python/flashvision /tmp/pkg-blocks/ && cp /tmp/kit-blocks/python/_C*.so /tmp/pkg-blocks/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-blocks LD_LIBRARY_PATH=/tmp/kit-blocks
timeout -k 5 300 python3 .devbin/s19/cpu_blocks.py > $R/cpu-blocks2.txt 2>&1; echo "blocks rc=$?"; cat $R/cpu-blocks2.txt
echo "$(el) all done"; save
