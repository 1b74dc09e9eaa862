#!/usr/bin/env bash
# Session 23, call 3: kit mdiv2 (wip/sm90-mask-tiles at db3d4d6: up to D = 128 the mask walks only the column
# tiles that can hold masked keys, and locate_work divides with FastDivisor) through the full GPU
# gtests and memcheck; every case timed flashvision-only with processes alternated widths2 mask
# mdiv2 mdiv2 mask widths2 (0.1 s a measurement; mask = fa3dfe2, the mask change alone); then mdiv2
# beside every peer (0.2 s, --telemetry) and the long cases held 2 s against cuDNN.
# carry: [".devbin/s23/kit-widths2.tar.xz", ".devbin/s23/kit-mask.tar.xz", ".devbin/s23/kit-mdiv2.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in widths2 mask mdiv2; do
  tar xJf .devbin/s23/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use mdiv2
T=/tmp/kit-mdiv2/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-mdiv2.txt.gz
echo "== GPU gtests mdiv2"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*CausalAlignment*/bf16_sm90:*VarlenCausalGqa*/bf16_sm90:*GpuSm90CrossTile.*/bf16:*GpuFwdSplit.ForcedParts*/bf16_sm90' > $R/memcheck-mdiv2.txt 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-mdiv2.txt
echo "$(el) tests done"; save
n=0
for k in widths2 mask mdiv2 mdiv2 mask widths2; do
  n=$((n+1)); use $k
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab $n $k rc=$?"
  save
done
echo "$(el) ab done"
use mdiv2
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt
echo "$(el) all done"; save
timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 2 --telemetry \
  --case sweep-d64-n16384 --case sweep-d128-n16384 --case sweep-d256-n16384 --case flux-2048 --case video-49f-720p \
  --json $R/held-mdiv2.json > $R/held-mdiv2.txt 2>&1; echo "== held rc=$?"; grep -E "^(sweep|flux|video)" $R/held-mdiv2.txt
echo "$(el) done"; save
