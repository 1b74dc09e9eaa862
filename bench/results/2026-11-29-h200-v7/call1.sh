#!/usr/bin/env bash
# Session 5, call 1: the sm90 backward of buckets 32/48/80/96 (wip/sm90-bwd-buckets binaries) —
# its sm90 tests, sanitizers and an A/B fwd+bwd bench against the sm80 backward; the Python suite
# of HEAD's wheel on CUDA (first run with the Hopper backward), concurrently with the gtest shards.
set -uo pipefail
O=/tmp/o1; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call1.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/bwd-buckets
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a $S
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl .whl/diffusers-*.whl .whl/importlib_metadata-*.whl .whl/lazy_importer-*.whl > $O/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout -k 5 330 python3 -m pytest tests/python -q -p no:cacheprovider -rs > $O/pytest_all.log 2>&1; echo "pytest rc=$?" > $O/pytest_rc) &
pyjob=$!
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 240 $B/flashvision_gpu_tests \
  --gtest_filter='*sm90*:*Sm90*' > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gtest sm90 shards done ($(el))" | tee -a $S
grep -h '^\[  PASSED\|^\[  FAILED\|Timeout\|Segmentation' $O/t_*.log | tee -a $S
timeout -k 5 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.*/sm90:*Sm90Backward*Bucket*' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='Cuda/GpuSanitize.VarlenTorchLayout/sm90' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
wait; cat $O/pytest_rc | tee -a $S; tail -1 $O/pytest_all.log | tee -a $S; grep -E "^FAILED|^ERROR" $O/pytest_all.log | head -20 | tee -a $S
echo "python done ($(el))" | tee -a $S
for r in 1 2; do for k in sm80 sm90; do timeout -k 5 120 $B/flashvision bench --device cuda --backward --backward-kernel $k --no-naive \
  --case sd15-self-32 --case vit-h14-224 --case dit-xl2-512 --case sd15-self-64 --case vit-b16-224 --case sweep-d128-n4096 \
  --json $O/bwd_${k}_$r.json > $O/bwd_${k}_$r.log 2>&1; echo "bench $k r$r rc=$? ($(el))" | tee -a $S; done; done
grep -h "fwd+bwd " $O/bwd_sm80_*.log $O/bwd_sm90_*.log | grep -v " rep " | tee -a $S
