#!/usr/bin/env bash
# Session 9, final GPU call: main after this session's merges (binaries built on the development
# machine from the merged tree, carried xz-compressed): the whole GPU test binary in 8 shards,
# compute-sanitizer memcheck and racecheck on the sanitize suite and the new paths, the sm80
# backward's tail split off/auto in one binary (two interleaved rounds), then every BENCH.md case
# with the sm80 kernels for both passes and with the automatic kernels, next to SDPA's FA2 and
# cuDNN in the same call.
set -uo pipefail
O=/tmp/s9final; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/final.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=/tmp/s9bin; mkdir -p $B; tar xJf ${BINS:-.devbin/s9/bins.tar.xz} -C $B; echo "unpacked ($(el))" | tee -a $S
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 200 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter="${MEMCHECK_FILTER:-*GpuSanitize*:*GpuFwdSplit.GroupedHeads*bf16*:*GpuFwdSplit.SeveralWaves*bf16*:*GpuBwdTailSplit.MixedGrids*bf16*:*GpuBwdTailSplit.Varlen*bf16*}" > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 45 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter="${RACECHECK_FILTER:-Cuda/GpuSanitize.DenseCausalGqa/*}" > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
[ -n "${SKIP_BENCH:-}" ] && exit 0
AB="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case flux-1024 --case sdxl-self-128 --case dit-xl2-512 --case vit-h14-224"
for r in 1 2; do for v in 0 auto; do
  FLASHVISION_SM80_BWD_TAIL_SPLIT=$v timeout -k 5 60 $B/flashvision bench --device cuda --kernel sm80 --backward \
    --backward-kernel sm80 --no-naive --budget 0.2 $AB --json $O/tail-$v-$r.json > $O/tail-$v-$r.log 2>&1
  echo "tail split $v round $r rc=$? ($(el))" | tee -a $S
done; done
C="--case all"
timeout -k 5 125 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.2 $C \
  --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
timeout -k 5 105 $B/flashvision bench --device cuda --backward --no-naive --budget 0.2 $C \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 140 python3 .devbin/sdpa_peers.py --backward --budget 0.2 --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
