#!/usr/bin/env bash
# Session 35, call 4. Kit g: main at the review's mend (combine_params sets early_start from the
# device; host code only). The suites that launch programmatic dependents (forward splits and
# their combine on sm80 and sm90, FP8 and D = 512, the sm80 backward's tail split) and the
# narrow-first suite, sharded.
# carry: [".devbin/s35c"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35c/kit-g.tar.xz -C /tmp || exit 1
export LD_LIBRARY_PATH=/tmp/kit-g
F='*FwdSplit*:*BwdTailSplit*:*SplitBackward*:*BwdD512*:*Sm90Fp8*:*Sm90NarrowFirst*'
pids=()
for i in $(seq 0 11); do
  GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout -k 5 200 /tmp/kit-g/bin/flashvision_gpu_tests > /tmp/s-$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/s-*.txt | gzip > $R/gtests-g.txt.gz
grep -h "^\[  PASSED" /tmp/s-*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/s-*.txt | sort -u | head -20
tar czf "$OUT/results.tgz" -C $R .
