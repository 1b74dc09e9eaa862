#!/usr/bin/env bash
# Branch wip/sm80-bwd-v6 (sm80 backward options, helper's call.sh trimmed): the options' GPU tests,
# then the sm80 backward on five cases with each option, base run first and last.
set -uo pipefail
B=.devbin/bwd-v6; O=$1/bwdv6; mkdir -p $O
t0=$(date +%s)
for i in $(seq 0 7); do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $B/flashvision_gpu_tests \
    --gtest_filter='*GpuBwdOptions*:*GpuBwdTileVariants*' > $O/t_$i.log 2>&1 &
done; wait
echo "bwd-v6 tests: passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l) ($(( $(date +%s)-t0 ))s)"
grep -h '^\[  FAILED  \] [A-Z]' $O/t_*.log | sort -u | head
C="--case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d128-n4096 --case sweep-d64-n4096 --case flux-1024"
run() {
  local label=$1; shift
  env "$@" timeout 100 $B/flashvision bench --device cuda --kernel sm80 --backward-kernel sm80 \
    --backward --no-naive --budget 0.15 $C --json $O/$label.json > $O/$label.log 2>&1
  echo "bwd-v6 $label rc=$? ($(( $(date +%s)-t0 ))s)"
}
run base
run stagger16 FLASHVISION_SM80_BWD_STAGGER=16
run split FLASHVISION_SM80_BWD_SDP=split
run groups FLASHVISION_SM80_BWD_SDP=groups
run groups16 FLASHVISION_SM80_BWD_SDP=groups FLASHVISION_SM80_BWD_STAGGER=16
run base2
python3 $B/bwd_only.py base=$O/base.json stagger16=$O/stagger16.json split=$O/split.json \
  groups=$O/groups.json groups16=$O/groups16.json base2=$O/base2.json
