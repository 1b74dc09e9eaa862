#!/usr/bin/env bash
# One device call from the repo root of /work/main (branch wip/sm80-bwd-stalls, binaries here):
# the tests of the tiled dQ workspace and of every backward path that adds into it, memcheck on
# the sanitizer cases, then the backward benchmark: main's binary, this branch (tiles, the default)
# and this branch with FLASHVISION_SM80_BWD_DQ_LAYOUT=rows (main's layout), alternated so that
# drift shows. Results and summary.txt in $OUT. `call.sh tests` or `call.sh bench` runs one half
# (each well inside one 10-minute call; both together may not be).
set -uo pipefail
B=${B:-.devbin/sm80-bwd-stalls}
BASE=${BASE:-.devbin/s7/base/flashvision}
OUT=${OUT:-/tmp/sm80-bwd-stalls-out}; mkdir -p "$OUT"; S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$S"
t0=$(date +%s)
run_tests() {  # name filter [prefix...]
  local name=$1 filter=$2; shift 2
  timeout 330 "$@" $B/flashvision_gpu_tests --gtest_filter="$filter" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? passed $(grep -h '^\[  PASSED  \]' "$OUT/$name.log" | awk '{print $4}')" \
       "skipped $(grep -h '^\[  SKIPPED \] [0-9]' "$OUT/$name.log" | awk '{print $4}')" \
       "failed $(grep -h '^\[  FAILED  \] [0-9]' "$OUT/$name.log" | awk '{print $4}') ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
  grep -h '^\[  FAILED  \] [A-Z]' "$OUT/$name.log" | head -20 | tee -a "$S"
  grep -h 'ERROR SUMMARY' "$OUT/$name.log" | tail -2 | tee -a "$S"
}
CASES="--case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d64-n4096 --case sweep-d128-n4096 --case flux-1024 --case sdxl-self-128"
bench() {  # tag binary [env...]
  local tag=$1 bin=$2; shift 2
  timeout 110 env "$@" $bin bench --device cuda --kernel sm80 --backward --backward-kernel sm80 \
    --no-naive --budget 0.3 $CASES --json "$OUT/$tag.json" > "$OUT/$tag.log" 2>&1
  echo "bench $tag rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
}
PART=${1:-all}
if [ "$PART" != bench ]; then
  run_tests dq 'DqLayout.*:Cuda/GpuBwdOptions.*:GpuDeterministic.*:Cuda/GpuWorkspace.*:Cuda/GpuSplitBackward.*:Cuda/GpuBwdTileVariants.*:Cuda/GpuSm90Backward.*:Cuda/GpuBwdHeadDim512.*'
  run_tests memcheck 'Cuda/GpuSanitize.*:Cuda/GpuWorkspace.*' compute-sanitizer --tool memcheck
fi
[ "$PART" = tests ] && exit 0
bench base1 "$BASE"
bench tiles1 "$B/flashvision"
bench rows1 "$B/flashvision" FLASHVISION_SM80_BWD_DQ_LAYOUT=rows
bench tiles2 "$B/flashvision"
bench base2 "$BASE"
