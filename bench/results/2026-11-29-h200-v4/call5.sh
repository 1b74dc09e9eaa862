#!/usr/bin/env bash
# Device call 5: main with the FA2-style backward tiles — the whole GPU suite, compute-sanitizer,
# then every BENCH.md case forward and fwd+bwd with the automatic kernel (sm90 forward) and with
# the sm80 forward, and PyTorch SDPA's FA2, cuDNN and memory-efficient backends in the same call.
set -uo pipefail
B=.devbin; O=/tmp/o5; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout 240 $B/main/flashvision_gpu_tests > /tmp/t_$i.log 2>&1 &
done; wait; cat /tmp/t_*.log > $O/tests.log
echo "tests: passed $(grep -h '^\[  PASSED  \]' /tmp/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' /tmp/t_*.log | awk '{s+=$3} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' /tmp/t_*.log | wc -l) ($(( $(date +%s)-t0 ))s)" | tee -a $S
grep -h '^\[  FAILED  \] [A-Z]' /tmp/t_*.log | sort -u | head -20 | tee -a $S
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/main/flashvision_gpu_tests \
    --gtest_filter='*GpuSanitize*:*GpuWorkspace*' > $O/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $O/san_$tool.log | tail -1) tests ok: $(grep -c '^\[       OK \]' $O/san_$tool.log) ($(( $(date +%s)-t0 ))s)" | tee -a $S
done
timeout 200 $B/main/flashvision bench --device cuda --case all --backward --no-naive --budget 0.15 \
  --json $O/bench_fv_auto.json > $O/bench_fv_auto.log 2>&1
echo "bench auto rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a $S
timeout 200 $B/main/flashvision bench --device cuda --kernel sm80 --case all --backward --no-naive --budget 0.15 \
  --json $O/bench_fv_sm80.json > $O/bench_fv_sm80.log 2>&1
echo "bench sm80 rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a $S
timeout 200 python3 $B/sdpa_peers.py --backward --budget 0.15 --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --json $O/bench_peers.json > $O/bench_peers.log 2>&1
echo "peers rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a $S
tar czf $OUT/call5.tgz -C $O .
