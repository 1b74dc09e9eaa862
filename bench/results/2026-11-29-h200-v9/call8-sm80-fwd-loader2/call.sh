#!/usr/bin/env bash
# Session 7, final GPU call: main after this session's merges (binaries built on the development
# machine, .devbin/s7/final): the whole GPU test binary in 8 shards, compute-sanitizer memcheck and
# racecheck on the sanitize suite and the new paths, then every BENCH.md case with the sm80 kernels
# for both passes and with the automatic kernels, next to SDPA's FA2 and cuDNN in the same call.
set -uo pipefail
O=/tmp/s7final; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/final.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=${B:-.devbin/s7/final}
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter="${MEMCHECK_FILTER:-*GpuSanitize*:Cuda/GpuWorkspace.*:*DqInTiles*}" > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 60 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter="${RACECHECK_FILTER:-Cuda/GpuSanitize.DenseCausalGqa/*}" > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
C="--case all"
if [ -n "${AB_BASE:-}" ]; then  # the forward loader A/B: main's binary against this one, twice
  CF="--case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d256-n1024 --case flux-1024 --case sweep-d128-n4096 --case sweep-d64-n4096 --case sdxl-self-128"
  for r in 1 2; do for v in base new; do bin=$B/flashvision; [ $v = base ] && bin=$AB_BASE
    timeout -k 5 60 $bin bench --device cuda --kernel sm80 --no-naive --budget 0.3 $CF --json $O/ab-$v-$r.json > $O/ab-$v-$r.log 2>&1
    echo "ab $v $r rc=$? ($(el))" | tee -a $S; grep -E "^\S+ +\S+ +flashvision" $O/ab-$v-$r.log | awk "{print \$1, \$6, \$7, \$8}" | tee -a $S; done; done
fi
timeout -k 5 130 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.2 $C \
  --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
timeout -k 5 110 $B/flashvision bench --device cuda --backward --no-naive --budget 0.2 $C \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.2 --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
