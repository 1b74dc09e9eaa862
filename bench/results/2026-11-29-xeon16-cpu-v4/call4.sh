#!/usr/bin/env bash
# Session 6, call 4: the CPU forward's two GEMMs alone at its tile shapes (AVX-512, one thread):
# the library's kernel against other register tiles and contiguous B panels (gemm_variants.cpp).
set -uo pipefail
S=$OUT/summary.txt
for cfg in "64 384 128" "128 384 64" "256 192 64" "40 384 128" "80 272 128" "160 96 128"; do
  timeout -k 5 60 .devbin/s6/gv512 $cfg 2>&1 | tee -a $S
done
