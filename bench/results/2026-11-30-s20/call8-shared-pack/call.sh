#!/usr/bin/env bash
# Session 20, device call 8: branch wip/amx-shared-pack (kit shared: f747b5d + the scratch switch
# FLASHVISION_SCRATCH_AMX_SHARED, CPU-only build): the AMX CPU tests on native tiles, then
# cpu_shared.py (shared against per-thread packing, alternated in one process, torch's CPU SDPA
# in every round). Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-11-30-s20/call8-shared-pack
R=/tmp/res8; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
tar xJf .devbin/s20/kit-shared.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-shared && cp -r python/flashvision /tmp/pkg-shared/ && cp /tmp/kit-shared/python/_C*.so /tmp/pkg-shared/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-shared LD_LIBRARY_PATH=/tmp/kit-shared
timeout -k 5 90 /tmp/kit-shared/bin/flashvision_tests --gtest_filter='CpuAmx.*:CpuForward*:CpuSchedule*' > $R/amx-tests.txt 2>&1; echo "amx tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \] CpuAmx" $R/amx-tests.txt
save
timeout -k 5 300 python3 $D/cpu_shared.py > $R/cpu_shared.txt 2>&1; echo "shared rc=$?"; cat $R/cpu_shared.txt
save
