#!/usr/bin/env bash
# Session 20, device call 2: the AMX forward's tile loops at vae-mid-512's sizes (amxprobe3.cpp,
# g++ -O2 -std=c++20 -fopenmp -mamx-tile -mamx-bf16 -mavx512f), then call 1's gemm_probe.py
# (fixed import) with main's kit. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
tar xJf .devbin/s19/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
OMP_PROC_BIND=close OMP_PLACES=cores timeout -k 5 200 .devbin/s20/amxprobe3 > $R/amxprobe3.txt 2>&1; echo "probe rc=$?"; cat $R/amxprobe3.txt
save
timeout -k 5 150 python3 bench/results/2026-11-30-s20/call1-probe/gemm_probe.py > $R/gemm_probe.txt 2>&1; echo "gemm rc=$?"; cat $R/gemm_probe.txt
save
