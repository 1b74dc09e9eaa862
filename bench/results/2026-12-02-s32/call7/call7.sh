#!/usr/bin/env bash
# Session 33, call 7. Kit r: main with the check for programmatic launches shared by the split
# combine and the sm80 backward's tail (src/cuda/common/programmatic_launch.cpp). The suites that
# launch programmatic dependents: the forward splits (sm80, sm90, FP8, D = 512) and the backward's
# tail split, in shards.
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res7; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s32/kit-r.tar.xz -C /tmp || exit 1
export LD_LIBRARY_PATH=/tmp/kit-r
F='*FwdSplit*:*HeadDimsAbove256*:*Fp8*Split*:*BwdTailSplit*:*BwdHeadDim512*'
pids=()
for i in $(seq 0 11); do
  GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout -k 5 150 /tmp/kit-r/bin/flashvision_gpu_tests > /tmp/s$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/s*.txt > $R/gtests-pdl-r.txt
echo "== suites $(el)"; grep -h "^\[  PASSED" /tmp/s*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/s*.txt | sort -u | head
tar czf "$OUT/results.tgz" -C $R .
