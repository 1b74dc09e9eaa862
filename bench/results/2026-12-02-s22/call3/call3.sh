#!/usr/bin/env bash
# Session 22, call 3: main at ac6a38f as landed (kit land: kit x2 and Q's descriptor made per
# block) tested in full (GPU gtests, 12 shards; memcheck on the ramps, causal and varlen), timed
# against the previous main (kit main, d70dbe8) on every case with cuDNN, alternated main land
# land main (0.1 s per measurement), the long cases held 2 s with --telemetry, every case beside
# every peer (0.2 s, --telemetry), then the Python tests on the GPU.
# carry: [".devbin/s20/kit-main.tar.xz", ".devbin/s22/kit-land.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in main land; do
  tar xJf .devbin/s2*/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use land
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 /tmp/kit-land/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-land.txt.gz
echo "== GPU gtests land"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
timeout -k 5 120 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-land/bin/flashvision_gpu_tests \
  --gtest_filter='*ScoresRising*/bf16_sm90:*ScoresRising*/f16_sm90:*VarlenCausalGqa*/bf16_sm90:*CausalAlignment*/bf16_sm90' > /tmp/san.txt 2>&1
echo "== memcheck land rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " /tmp/san.txt; cp /tmp/san.txt $R/memcheck-land.txt
echo "$(el) tests done"; save
n=0
for k in main land land main; do
  n=$((n+1)); use $k
  timeout -k 5 80 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) ab done"
use land
timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 2 --telemetry \
  --case sweep-d64-n16384 --case sweep-d128-n16384 --case sweep-d256-n16384 --case flux-2048 --case video-49f-720p \
  --json $R/held-land.json > $R/held-land.txt 2>&1; echo "== held land rc=$?"; grep -E "^(sweep|flux|video)" $R/held-land.txt
save
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt
echo "$(el) all done"; save
timeout -k 5 110 python3 -m pytest -q -x tests/python -p no:cacheprovider > $R/pytest-gpu.txt 2>&1
echo "== pytest rc=$?"; tail -3 $R/pytest-gpu.txt
echo "$(el) done"; save
