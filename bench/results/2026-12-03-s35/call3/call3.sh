#!/usr/bin/env bash
# Session 35, call 3. Kit f: what lands (main with the programmatic-launch choice passed down and
# the narrow first key block for buckets 64 and 80; bucket 128's narrow kernel dropped after call 2).
# 1. Every GPU gtest on kit f (12 shards) and the Python suite beside them; the narrow-first suite
#    under memcheck.
# 2. Every case, kit f beside cuDNN and FA2.
# carry: [".devbin/s35b"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35b/kit-f.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-f/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/kit-f
T=/tmp/kit-f/bin/flashvision_gpu_tests
(timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-f.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-f.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-f.txt.gz
echo "== kit-f GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-f.txt
GTEST_FILTER='Cuda/GpuSm90NarrowFirst.*/f16' timeout -k 5 200 \
  compute-sanitizer --tool memcheck $T > $R/memcheck-f.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-f.txt
save
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit f and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
