#!/usr/bin/env bash
# sm80 at D = 256 (branch wip/sm80-d256): GPU tests of the new tile variants, then the sm80
# forward and fwd+bwd of the D = 256 sweep, sdxl-self-128 and sweep-d64-n4096 for main's sm80
# code (main/, built from c278b2d with the same flags) against the branch (wip/) with its
# defaults and with the 64-key backward tile (FLASHVISION_SM80_BWD_TILE=1), two rounds.
# Run from the repository root with carry [".devbin/sm80-d256"]; writes $OUT/summary.txt and
# $OUT/sm80-d256.tgz (logs and JSON).
set -uo pipefail
B=.devbin/sm80-d256; O=/tmp/o_d256; mkdir -p $O; S=$OUT/summary.txt
t0=$(date +%s)
trap 'tar czf $OUT/sm80-d256.tgz -C $O . 2>/dev/null' EXIT
el() { echo "($(( $(date +%s)-t0 ))s)"; }

# Correctness of every sm80 tile variant touched (forward 0/1, backward 0..3) plus the split and
# deterministic suites on sm80, in 4 shards (45 tests).
F='FwdTileVariant.*:BwdTileVariant.*:BwdWarpGrid.*:*GpuFwdTileVariants*:*GpuBwdTileVariants*:*GpuSplitBackward*/*sm80:GpuDeterministic.*'
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout -k 5 150 $B/wip/flashvision_gpu_tests \
    --gtest_filter="$F" > $O/tests_$i.log 2>&1 &
done; wait
echo "tests: passed $(grep -h '^\[  PASSED  \]' $O/tests_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/tests_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/tests_*.log | wc -l) $(el)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' $O/tests_*.log | sort -u | head | tee -a $S

C="--case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sdxl-self-128 --case sweep-d64-n4096"
run() {  # name, env assignment or "", binary dir
  env $2 timeout -k 5 60 $B/$3/flashvision bench --device cuda --kernel sm80 --backward \
    --backward-kernel sm80 --no-naive --budget 0.5 $C --json $O/$1.json > $O/$1.log 2>&1
  echo "== $1: fwd $(grep ' fwd ' $O/$1.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
  echo "   $1: fwd+bwd $(grep 'fwd+bwd' $O/$1.log | awk '{printf "%s %s | ", $1, $8}') $(el)" | tee -a $S
}
for round in 1 2; do
  run main_$round "" main
  run wip_$round "" wip
  run wip-bwd64_$round FLASHVISION_SM80_BWD_TILE=1 wip
done
