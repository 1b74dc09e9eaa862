#!/usr/bin/env bash
# Session 6, call 11: main with the sm80 backward's warp groups (default on Hopper at head dims
# 97-256) and its bucket 512: the whole GPU test binary in 8 shards, compute-sanitizer memcheck and
# racecheck on the sanitize suite and on the new paths, then the CLI with the sm80 kernels for both
# passes and with the automatic kernels on the sm80-backward cases, next to FA2 and cuDNN.
set -uo pipefail
O=/tmp/o11; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call11.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/final7
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 300 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='*GpuSanitize*:Cuda/GpuBwdHeadDim512.DenseBothLayoutsPartialBlocks/bf16' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.DenseCausalGqa/*:Cuda/GpuBwdHeadDim512.HeadDimsPaddedIntoTheBucket/bf16' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
C80="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sdxl-self-128 --case flux-1024 --case vit-b16-224 --case dit-xl2-512"
timeout -k 5 150 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.3 $C80 \
  --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
CA="--case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sd15-self-16 --case vae-mid-512"
timeout -k 5 120 $B/flashvision bench --device cuda --backward --no-naive --budget 0.3 $CA \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.3 --impl sdpa-flash --impl sdpa-cudnn \
  $(echo $C80 --case sd15-self-16 --case vae-mid-512 | sed 's/--case /--case=/g') --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
grep -E "^\S+ +\S+ +flashvision" $O/sm80.log $O/auto.log | cut -c1-130 | tee -a $S
