#!/usr/bin/env bash
# Session 32, call 2. Kits: e (main's kernels, as in session 31's call 4) and b (branch
# wip/sm90-balanced-tail: the last wave's key blocks dealt over the CTAs in balanced ranges, merged
# in the kernel by each tile's last piece; no combine kernel).
# 1. The split, FP8-split, D = 512 and multicast gtests on kit b (correctness first).
# 2. The cases the tail model touches and controls, kits e, b, b with FLASHVISION_SM90_FWD_SPLIT=0
#    (b0), b0, b, e.
# 3. A memcheck of the split tests on kit b; every GPU gtest on kit b (12 shards).
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s31/kit-e.tar.xz -C /tmp 2>/dev/null || tar xJf .devbin/s32/kit-e.tar.xz -C /tmp || exit 1
tar xJf .devbin/s32/kit-b.tar.xz -C /tmp || exit 1
for K in kit-e kit-b; do
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
T=/tmp/kit-b/bin/flashvision_gpu_tests
use kit-b
timeout -k 5 120 $T --gtest_filter='*FwdSplit*:*TailSchedule*:*HeadDimsAbove256*:*Fp8*Split*:*KvMulticast*' > $R/gtests-split-b.txt 2>&1
echo "== split tests rc=$? $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-split-b.txt | head -20
save
CASES="--case flux-1024 --case sdxl-self-128 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d64-n4096 --case sweep-d256-n4096 --case sweep-d256-n16384 --case vae-mid-512 --case flux-2048 --case vit-l14-336 --case dit-xl2-512"
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
n=0
for K in e b b0 b0 b e; do
  n=$((n + 1))
  if [ $K = e ]; then use kit-e; unset FLASHVISION_SM90_FWD_SPLIT; fi
  if [ $K = b ]; then use kit-b; unset FLASHVISION_SM90_FWD_SPLIT; fi
  if [ $K = b0 ]; then use kit-b; export FLASHVISION_SM90_FWD_SPLIT=0; fi
  timeout -k 5 60 $B $CASES --json $R/tail-$n-$K.json > $R/tail-$n-$K.txt 2>&1
  echo "== tail $n $K rc=$? $(el)"; grep -E "flashvision +fwd" $R/tail-$n-$K.txt | awk '{print $1, $4, $5, $6}'
done
unset FLASHVISION_SM90_FWD_SPLIT
save
(timeout -k 5 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*FwdSplit.SeveralWavesWithATail/bf16_sm90:*FwdSplit.GroupedHeadsLayoutsAndNoLse/bf16_sm90' > $R/memcheck-b.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-b.txt) &
mpid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 220 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-b.txt.gz
echo "== kit-b GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $mpid; echo "== memcheck $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $R/memcheck-b.txt | head
echo "$(el) done"; save
