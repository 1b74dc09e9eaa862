#!/usr/bin/env bash
# Device call 4: sm80 forward with the wider tiles and the sm90 D=512 path: every GPU test,
# sanitizer, sm80 bench (fwd, fwd+bwd) with FA2 and cuDNN in the same call, vae-mid-512 on sm90.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
B=$(dirname "$0"); S=$OUT/summary.txt
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 200 $B/flashvision_gpu_tests > /tmp/shard_$i.log 2>&1 &
done
wait
cat /tmp/shard_*.log > $OUT/tests.log
echo "gpu tests: passed $(grep -h '^\[  PASSED  \]' /tmp/shard_*.log | awk '{s+=$4} END {print s}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/shard_*.log | awk '{s+=$3} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/shard_*.log | awk '{s+=$3} END {print s+0}')" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" /tmp/shard_*.log | head -20 >> $S
grep -h "Skipped\|SKIPPED \] [A-Z]" /tmp/shard_*.log | sort | uniq -c | head -10 >> $S
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='*GpuSanitize*:*Sm90Dispatch.HeadDims*' > /tmp/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -1)" | tee -a $S
done
timeout 150 $B/flashvision bench --device cuda --case all --kernel sm80 --backward --no-naive --budget 0.15 --json $OUT/bench_sm80.json > $OUT/bench.log 2>&1
echo "bench sm80 rc=$?" | tee -a $S
timeout 60 $B/flashvision bench --device cuda --case vae-mid-512 --no-naive --budget 0.15 --json $OUT/bench_vae.json >> $OUT/bench.log 2>&1
echo "bench vae rc=$?" | tee -a $S
grep "vae-mid-512" $OUT/bench.log | tail -2 >> $S
timeout 150 python3 $B/sdpa_peers.py --backward --budget 0.15 --json $OUT/peers.json --impl sdpa-flash --impl sdpa-cudnn >> $OUT/bench.log 2>&1
echo "peers rc=$?" | tee -a $S
C="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n4096 --case vit-l14-336 --case flux-1024"
for v in main $(ls $B/variants 2>/dev/null | grep sm80- | sed 's/sm80-//'); do b=$B/flashvision; [ $v != main ] && b=$B/variants/sm80-$v/flashvision
  echo "== sm80 $v" >> $S; timeout 45 $b bench --device cuda $C --kernel sm80 --no-naive --budget 0.15 2>&1 | grep " fwd " | awk '{print $1, $4, $7, $8, $9}' >> $S; done
