#!/usr/bin/env bash
# Session 31, call 4: kit e (wip/sm90-softmax-ilp at 776085d: the landing build's kernels, the wide
# text tile and the exact softmax path's shorter chains). Every case with flashvision beside cuDNN
# and FA2; every GPU gtest (12 shards), the Python suite, a memcheck of the wide text tile's test.
# carry: [".devbin/s31"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-e
tar xJf .devbin/s31/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
save
(timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*WideTiles.TextTilesMatchTheReference/bf16' > $R/memcheck-$K.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-$K.txt) &
mpid=$!
(timeout -k 5 210 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-$K.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-$K.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-$K.txt.gz
echo "== $K GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $mpid; echo "== $K memcheck $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $R/memcheck-$K.txt | head
wait $ppid; echo "== $K pytest $(el)"; tail -4 $R/pytest-$K.txt
echo "$(el) done"; save
