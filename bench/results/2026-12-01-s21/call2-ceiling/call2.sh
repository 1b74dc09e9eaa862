#!/usr/bin/env bash
# Session 21, device call 2: the GPU's bf16 matmul rate (ceiling.py) with nvidia-smi's clocks,
# power and clock-event reasons logged every 100 ms; then flux-2048 and D = 128 N = 16384 for 3 s
# each beside cuDNN and FA2 under the same log; then main (kit-main) on every BENCH.md case
# against every SDPA backend and naive (one run, CUDA graphs). Everything but log.txt goes into
# results.tgz. carry: [".devbin/s20/kit-main.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-12-01-s21/call2-ceiling
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
Q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
SMI=$!
sleep 1; head -2 $R/smi.csv
date +%s.%N
timeout -k 5 60 python3 $D/ceiling.py > $R/ceiling.txt 2>&1; echo "ceiling rc=$?"; cat $R/ceiling.txt
echo "$(date +%s) sustained attention start"
timeout -k 5 120 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 3 --case flux-2048 --case sweep-d128-n16384 --json $R/sustained.json > $R/sustained.txt 2>&1
echo "$(date +%s) sustained attention rc=$?"; grep -E "^(flux|sweep)" $R/sustained.txt
kill $SMI; save
echo "$(el) ceiling done"
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 \
  --json $R/all-gpu.json > $R/all-gpu.txt 2>&1; echo "all-gpu rc=$?"; grep -v "Warning\|return F\." $R/all-gpu.txt | grep "flashvision \|geometric"
echo "$(el) all done"; save
