#!/usr/bin/env bash
# Session 19, device call 6: the CPU AMX forward's query blocks on vae-mid-512 (and flux-1024)
# (FLASHVISION_CPU_AMX_BLOCKS with each case's own query rows), alternated in one process against
# torch's CPU SDPA. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res6; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-final.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-final && cp -r python/flashvision /tmp/pkg-final/ && cp /tmp/kit-final/python/_C*.so /tmp/pkg-final/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-final LD_LIBRARY_PATH=/tmp/kit-final
timeout -k 5 300 python3 .devbin/s19/cpu_blocks.py > $R/cpu-blocks3.txt 2>&1; echo "blocks rc=$?"; cat $R/cpu-blocks3.txt
echo "$(el) all done"; save
