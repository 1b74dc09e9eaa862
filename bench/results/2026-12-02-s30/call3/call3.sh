#!/usr/bin/env bash
# Session 30, call 3: the landing build of the half tiles (kit hf: wip/sm90-half-tiles, every
# head-dim bucket). Every GPU gtest (12 shards), the whole Python suite, a memcheck of the half
# tiles' tests; every case with flashvision beside cuDNN and FA2; the small shapes of call 2 again.
# carry: [".devbin/s30"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-hf
tar xJf .devbin/s30/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case rc=$? $(el)"; grep "best peer" $R/all-gpu.txt | tail -2
S="--shape 2,8,256,77,160 --shape 1,12,197,197,64 --shape 2,12,197,197,64 --shape 1,16,257,257,80 --shape 2,16,256,256,72 --shape 1,24,256,256,128"
timeout -k 5 60 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash $S \
  --cuda-graphs --budget 0.3 --json $R/small-gpu.json > $R/small-gpu.txt 2>&1
echo "== small shapes rc=$? $(el)"; grep -E "flashvision " $R/small-gpu.txt
save
(timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*HalfTiles.CausalGroupedLayoutsAndVarlen/*:*HalfTiles.SeveralTilesPerCta/bf16' > $R/memcheck-$K.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-$K.txt) &
mpid=$!
(timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-$K.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-$K.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 190 $T >/tmp/shard$i.txt 2>&1 &
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
save
echo "$(el) done"
