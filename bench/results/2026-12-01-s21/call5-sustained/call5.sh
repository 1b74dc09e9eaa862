#!/usr/bin/env bash
# Session 21, device call 5: the long cases held 2 s per implementation (--budget 2) with
# --telemetry sampling power.draw.instant: rate, clock and power at the power limit, for
# flashvision, cuDNN and FA2 in one run (main's kit). Everything but log.txt goes into results.tgz.
# carry: [".devbin/s20/kit-main.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
timeout -k 5 300 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --impl sdpa-flash --cuda-graphs --budget 2 --telemetry \
  --case sweep-d64-n16384 --case sweep-d128-n16384 --case sweep-d256-n16384 --case flux-2048 --case video-49f-720p --case sweep-d128-n1024 --case flux-1024 \
  --json $R/sustained.json > $R/sustained.txt 2>&1; echo "sustained rc=$?"; grep -v "Warning\|return F\." $R/sustained.txt
echo "$(el) all done"; save
