#!/usr/bin/env bash
# Device call 3 (final): every GPU test, sanitizer, full bench (sm90 forward, sm80 backward) with
# the SDPA peers in the same call, and the padded-bucket variant on the odd head dims.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
B=$(dirname "$0"); S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
echo "HGMMA in SASS: $(cuobjdump -sass $B/flashvision | grep -c HGMMA)" | tee -a $S
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 200 $B/flashvision_gpu_tests > /tmp/shard_$i.log 2>&1 &
done
wait
cat /tmp/shard_*.log > $OUT/tests.log
echo "gpu tests: passed $(grep -h '^\[  PASSED  \]' /tmp/shard_*.log | awk '{s+=$4} END {print s}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/shard_*.log | awk '{s+=$3} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/shard_*.log | awk '{s+=$3} END {print s+0}')" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" /tmp/shard_*.log | head -20 >> $S
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='*GpuSanitize*' > /tmp/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1)" | tee -a $S
done
timeout 200 $B/flashvision bench --device cuda --case all --backward --no-naive --budget 0.15 --json $OUT/bench_fv.json > $OUT/bench.log 2>&1
echo "bench rc=$?" | tee -a $S
timeout 200 python3 $B/sdpa_peers.py --backward --budget 0.15 --json $OUT/peers.json --impl sdpa-flash --impl sdpa-cudnn --impl sdpa-efficient >> $OUT/bench.log 2>&1
echo "peers rc=$?" | tee -a $S
C="--case vit-h14-224 --case sd15-self-64 --case sd15-self-32 --case dit-xl2-512 --case sd15-cross-64"
for v in main pad; do b=$B/flashvision; [ $v = pad ] && b=$B/variants/sm90-pad/flashvision
  echo "== $v" >> $S; timeout 60 $b bench --device cuda $C --no-naive --budget 0.15 2>&1 | grep " fwd " | awk '{print $1, $4, $7, $8}' >> $S; done
C="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n4096 --case vit-l14-336 --case flux-1024"
for v in main $(ls $B/variants | grep sm80- | sed 's/sm80-//'); do b=$B/flashvision; [ $v != main ] && b=$B/variants/sm80-$v/flashvision
  echo "== sm80 $v" >> $S; timeout 45 $b bench --device cuda $C --kernel sm80 --no-naive --budget 0.15 2>&1 | grep " fwd " | awk '{print $1, $4, $7, $8, $9}' >> $S; done
