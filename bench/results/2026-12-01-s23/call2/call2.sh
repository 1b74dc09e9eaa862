#!/usr/bin/env bash
# Session 23, call 2: the widths branch rebased onto main (kit widths2, 134e17f) through the full
# GPU gtests (12 shards) and memcheck on its new tests; then Nsight Compute on one steady-state
# forward launch of the short image shapes (ViT-B/16, ViT-L/14, DiT-XL/2), ours
# against cuDNN's: time, DRAM and L2 throughput, tensor pipe, issue activity, stall reasons.
# carry: [".devbin/s23/kit-widths2.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=widths2
tar xJf .devbin/s23/kit-$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/kit-$K
T=/tmp/kit-$K/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-$K.txt.gz
echo "== GPU gtests $K"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*SecondLongWidth*:*ScoresRisingFarAtOtherWidths*/bf16' > $R/memcheck-$K.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-$K.txt
echo "$(el) tests done"; save
ONE=bench/results/2026-11-30-s20/call11-ncu-d128/one_call.py
M="gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,launch__grid_size,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for shape in "256 12 197 64" "64 16 577 64" "16 16 1024 72"; do
  for impl in flashvision cudnn; do
    if [ $impl = flashvision ]; then KN="regex:fwd_kernel"; else KN="regex:sdpa|fmha|cudnn|fprop"; fi
    echo "== $impl $shape"
    timeout -k 5 60 ncu --kernel-name "$KN" --launch-skip 3 --launch-count 1 --metrics "$M" \
      python3 $ONE $impl $shape > "$R/ncu-$impl-${shape// /x}.txt" 2>&1; echo "rc=$?"
    grep -E "duration|dram__|lts__|gmma|issue_active|inst_executed|cycles_active|grid_size|stalled" "$R/ncu-$impl-${shape// /x}.txt" \
      | awk '/stalled/ { if ($NF+0 > 0.1) print; next } { print }' | head -30
    save
  done
done
echo "$(el) done"; save
