#!/usr/bin/env bash
# Session 21, device call 4: the bench's --telemetry on the GPU (its tests, then main's kit on
# every BENCH.md case against every SDPA backend and naive, one run, CUDA graphs, with the clock
# and power of each timing). Everything but log.txt goes into results.tgz.
# carry: [".devbin/s20/kit-main.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
(cd /tmp && timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider $OLDPWD/tests/python/test_bench_telemetry.py > $R/pytest-telemetry.txt 2>&1); echo "telemetry tests rc=$?"; tail -3 $R/pytest-telemetry.txt
timeout -k 5 300 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry \
  --json $R/all-gpu.json > $R/all-gpu.txt 2>&1; echo "all-gpu rc=$?"; grep -v "Warning\|return F\." $R/all-gpu.txt | grep "flashvision \|geometric\|telemetry\|MHz"
echo "$(el) all done"; save
