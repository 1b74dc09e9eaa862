#!/usr/bin/env bash
# Session 4, device call 2: wide (192-row, three-consumer) sm90 forward tiles chosen per problem —
# the whole GPU suite, compute-sanitizer (also with the wide tile forced), forward of every case
# against main's binary, and each D <= 64 case with the tile forced both ways.
set -uo pipefail
B=.devbin; O=/tmp/o2; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 240 $B/new/flashvision_gpu_tests > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests.log
echo "tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' /tmp/t_*.log | sort -u | head -20 | tee -a $S
for rows in "" 192; do for tool in memcheck racecheck; do
  FLASHVISION_SM90_FWD_ROWS=$rows timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B/new/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*/sm90:*GpuSm90WideTiles.CausalGroupedAndVarlen/bf16' > $O/san_${tool}_$rows.log 2>&1
  echo "$tool rows=${rows:-auto} rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_${tool}_$rows.log | tail -1) tests ok: $(grep -c '^\[       OK \]' $O/san_${tool}_$rows.log) ($(( $(date +%s)-t0 ))s)" | tee -a $S
done; done
for round in 1 2; do for v in main new; do
  timeout 150 $B/$v/flashvision bench --device cuda --kernel sm90 --case all --no-naive --budget 0.12 \
    --json $O/${v}_$round.json > $O/${v}_$round.log 2>&1
  echo "== $v $round: $(grep ' fwd ' $O/${v}_$round.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done; done
C="--case sweep-d64-n1024 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --case sdxl-cross --case sd15-self-64 --case vit-l14-336"
for rows in 128 192; do
  FLASHVISION_SM90_FWD_ROWS=$rows timeout 100 $B/new/flashvision bench --device cuda --kernel sm90 --no-naive --budget 0.12 $C \
    --shape 8,16,200,4096,64 --shape 1,16,4096,4096,64 --shape 3,16,4096,4096,64 --shape 4,8,1000,1000,40 \
    --json $O/rows$rows.json > $O/rows$rows.log 2>&1
  echo "== rows $rows: $(grep ' fwd ' $O/rows$rows.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
done
timeout 100 $B/new/flashvision bench --device cuda --kernel sm90 --no-naive --budget 0.12 $C \
  --shape 8,16,200,4096,64 --shape 1,16,4096,4096,64 --shape 3,16,4096,4096,64 --shape 4,8,1000,1000,40 \
  --json $O/rowsauto.json > $O/rowsauto.log 2>&1
echo "== rows auto: $(grep ' fwd ' $O/rowsauto.log | awk '{printf "%s %s | ", $1, $8}')" | tee -a $S
echo "done $(( $(date +%s)-t0 ))s" | tee -a $S
tar czf $OUT/call2.tgz -C $O .
