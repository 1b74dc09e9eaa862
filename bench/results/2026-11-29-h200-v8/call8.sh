#!/usr/bin/env bash
# Session 6, call 8: main with the sm90 forward's tail split and the CPU changes (binaries built
# on the development machine, .devbin/final6): the whole GPU test binary in 8 shards,
# compute-sanitizer on the sanitize suite and the split's tests, then the CLI's automatic kernels
# on the BENCH.md cases next to SDPA's FA2 and cuDNN (sdpa_peers.py) in the same call.
set -uo pipefail
O=/tmp/o8; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call8.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/final6
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 240 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='*GpuSanitize*:*GpuSm90FwdSplit*' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.DenseCausalGqa/*:Cuda/GpuSm90FwdSplit.ForcedPartsMatchTheReference/*' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
CA="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sdxl-self-128 --case flux-1024 --case vit-b16-224 --case dit-xl2-512 --case vit-h14-224 --case vit-l14-336 --case sd15-self-64 --case sd15-self-32 --case flux-2048"
timeout -k 5 150 $B/flashvision bench --device cuda --backward --no-naive --budget 0.3 $CA \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.3 --impl sdpa-flash --impl sdpa-cudnn \
  $(echo $CA | sed 's/--case /--case=/g') --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
grep -E "^\S+ +\S+ +flashvision" $O/auto.log | cut -c1-120 | tee -a $S
