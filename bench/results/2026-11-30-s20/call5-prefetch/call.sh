#!/usr/bin/env bash
# Session 20, device call 5: branch wip/amx-prefetch (kit pf, 618c4e1): the AMX CPU tests on
# native tiles with prefetching on, then cpu_prefetch.py (prefetch distances alternated in one
# process against torch's CPU SDPA). Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-11-30-s20/call5-prefetch
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
tar xJf .devbin/s20/kit-pf.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-pf && cp -r python/flashvision /tmp/pkg-pf/ && cp /tmp/kit-pf/python/_C*.so /tmp/pkg-pf/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-pf LD_LIBRARY_PATH=/tmp/kit-pf
FLASHVISION_SCRATCH_AMX_PREFETCH=2,2 timeout -k 5 60 /tmp/kit-pf/bin/flashvision_tests --gtest_filter='CpuAmx.*' > $R/amx-tests.txt 2>&1; echo "amx tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " $R/amx-tests.txt
timeout -k 5 400 python3 $D/cpu_prefetch.py > $R/cpu_prefetch.txt 2>&1; echo "prefetch rc=$?"; cat $R/cpu_prefetch.txt
save
