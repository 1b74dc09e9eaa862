#!/usr/bin/env bash
# Session 19, device call 5: main with the CPU AMX forward's 256-key blocks (branch
# wip/cpu-amx-blocks) on every BENCH.md case against torch's CPU SDPA in one run (issue 4's CPU
# figure), after the AMX CPU tests on native tiles. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-final.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-final && cp -r python/flashvision /tmp/pkg-final/ && cp /tmp/kit-final/python/_C*.so /tmp/pkg-final/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-final LD_LIBRARY_PATH=/tmp/kit-final
python3 -c "import flashvision as f; print(f.__build_commit__, f.compiled_backends())"
timeout -k 5 60 /tmp/kit-final/bin/flashvision_tests --gtest_filter='CpuAmx.*:CpuForwardBlocks.*:CpuSchedule*' > $R/cpu-amx-tests.txt 2>&1; echo "amx tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \] CpuAmx.(Forced|Long|Large|Native)" $R/cpu-amx-tests.txt
echo "$(el) tests done"; save
timeout -k 5 520 python3 -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa --budget 0.2 \
  --json $R/cpu-all.json > $R/cpu-all.txt 2>&1; echo "cpu-all rc=$?"; grep -v "Warning" $R/cpu-all.txt | grep "flashvision \|geometric\|wrote"
echo "$(el) all done"; save
