#!/usr/bin/env bash
# Session 17's second call: the GPU tests that call 1's kit skipped (head dims 32, 96, 192 not
# compiled there) and the CUDA integration tests, on a kit with every bucket.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
root=$(pwd)
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s17/kit2.tar.xz -C / || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-full/python/_C*.so /tmp/pkg/flashvision/ || exit 1
export PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
bin=/tmp/kit-full/bin/flashvision_gpu_tests
filter=$(paste -sd: .devbin/s17/skipped.txt)
echo "$(el) kit ready; tests to run: $("$bin" --gtest_filter="$filter" --gtest_list_tests | grep -c '^  ')"
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 "$bin" --gtest_filter="$filter" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
(cd "$root" && timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_integrations_cuda.py >"$OUT/pytest-integrations.txt" 2>&1; echo "pytest rc=$?" >>"$OUT/pytest-integrations.txt") &
pyp=$!
for p in "${pids[@]}"; do wait "$p"; echo "shard rc=$?"; done
cat /tmp/shard*.txt > "$OUT/gtests-skipped-before.txt"
grep -h "^\[       OK\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | grep " (" | cut -c1-13 | sort | uniq -c
grep -h "^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | grep " (" | sort -u | head -20
wait $pyp; tail -3 "$OUT/pytest-integrations.txt"
echo "$(el) done"
