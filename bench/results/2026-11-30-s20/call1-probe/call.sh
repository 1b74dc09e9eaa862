#!/usr/bin/env bash
# Session 20, device call 1: main (kit-main, 1fedcdb) on every BENCH.md case against every SDPA
# backend and naive on the GPU (one run, CUDA graphs); then the AMX probe (amxprobe2.cpp, built
# with g++ -O2 -std=c++20 -fopenmp -mamx-tile -mamx-bf16 -mavx512f) and torch's bf16 matmuls and
# CPU SDPA on vae-mid-512 beside flashvision. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-11-30-s20/call1-probe
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz|L2|L3" > $R/lscpu.txt; cat $R/lscpu.txt
OMP_PROC_BIND=close OMP_PLACES=cores timeout -k 5 100 .devbin/s20/amxprobe2 > $R/amxprobe2.txt 2>&1; echo "probe rc=$?"; cat $R/amxprobe2.txt
echo "$(el) probe done"; save
timeout -k 5 150 python3 $D/gemm_probe.py > $R/gemm_probe.txt 2>&1; echo "gemm rc=$?"; cat $R/gemm_probe.txt
echo "$(el) gemm done"; save
timeout -k 5 150 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 \
  --json $R/all-gpu.json > $R/all-gpu.txt 2>&1; echo "all-gpu rc=$?"; grep -v "Warning\|return F\." $R/all-gpu.txt | grep "flashvision \|geometric"
echo "$(el) all done"; save
