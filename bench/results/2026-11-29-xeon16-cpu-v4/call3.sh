#!/usr/bin/env bash
# Session 6, call 3: the CPU's fp32 GEMM ceiling (torch.mm) against flashvision's CPU forward at
# 1 thread and 16 threads over head dims 40..256 (is the forward GEMM-bound, softmax-bound or
# clock-bound?).
set -uo pipefail
O=/tmp/o3; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call3.tgz -C $O . 2>/dev/null' EXIT
timeout -k 5 60 python3 .devbin/s6/gemm_ceiling.py 2>&1 | tee -a $S
FV=.devbin/final/flashvision
for d in 40 64 128 256; do
  timeout -k 5 40 $FV bench --device cpu --threads 1 --no-naive --budget 1 --shape 1,1,4096,4096,$d > $O/t1_d$d.txt 2>&1
  grep flashvision $O/t1_d$d.txt | tail -1 | cut -c1-120 | tee -a $S
  timeout -k 5 40 $FV bench --device cpu --threads 16 --no-naive --budget 1 --shape 1,16,4096,4096,$d > $O/t16_d$d.txt 2>&1
  grep flashvision $O/t16_d$d.txt | tail -1 | cut -c1-120 | tee -a $S
done
grep -m1 MHz /proc/cpuinfo | tee -a $S
