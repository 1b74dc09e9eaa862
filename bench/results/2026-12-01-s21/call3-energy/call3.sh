#!/usr/bin/env bash
# Session 21, device call 3: energy.py on the long sweep cases and Flux 2048 (main's kit), then
# the same bench run of call 2 on the short image cases once more. Everything but log.txt goes
# into results.tgz. carry: [".devbin/s20/kit-main.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-12-01-s21/call3-energy
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
timeout -k 5 200 python3 $D/energy.py $R/smi.csv $R/energy.json sweep-d64-n16384 sweep-d128-n16384 sweep-d256-n16384 flux-2048 video-49f-720p sweep-d128-n1024 > $R/energy.txt 2>&1
echo "energy rc=$?"; cat $R/energy.txt
echo "$(el) done"; save
