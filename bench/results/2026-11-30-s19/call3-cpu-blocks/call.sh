#!/usr/bin/env bash
# Session 19, device call 3: the CPU AMX forward's blocks (FLASHVISION_CPU_AMX_BLOCKS, branch
# wip/cpu-amx-blocks) alternated in one process against torch's CPU SDPA, and the AMX CPU tests
# on native tiles. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-blocks.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-blocks && cp -r python/flashvision /tmp/pkg-blocks/ && cp /tmp/kit-blocks/python/_C*.so /tmp/pkg-blocks/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-blocks LD_LIBRARY_PATH=/tmp/kit-blocks
python3 -c "import flashvision as f; print(f.__build_commit__, f.compiled_backends(), f.describe_devices()[0])"
timeout -k 5 100 /tmp/kit-blocks/bin/flashvision_tests --gtest_filter='CpuAmx.*:CpuForwardBlocks.*:CpuSchedule*' > $R/cpu-amx-tests.txt 2>&1; echo "amx tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \] CpuAmx.(Forced|Bad|Native)" $R/cpu-amx-tests.txt
echo "$(el) tests done"; save
timeout -k 5 300 python3 .devbin/s19/cpu_blocks.py > $R/cpu-blocks.txt 2>&1; echo "blocks rc=$?"; cat $R/cpu-blocks.txt
echo "$(el) all done"; save
