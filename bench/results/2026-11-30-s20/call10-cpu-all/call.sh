#!/usr/bin/env bash
# Session 20, device call 10: main's CPU code (kit main: session 19's kit-main, the CPU code of
# 1fedcdb) on every BENCH.md case against torch's CPU SDPA in one run (issue 4's CPU figure), a second time: the rule set before it ran was to call the target met only if calls 9 and 10 both meet it.
# Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res10; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
timeout -k 5 480 python3 -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa --budget 0.2 \
  --json $R/cpu-all.json > $R/cpu-all.txt 2>&1; echo "cpu-all rc=$?"; grep -v "Warning" $R/cpu-all.txt | grep "flashvision \|geometric\|wrote"
echo "$(el) all done"; save
