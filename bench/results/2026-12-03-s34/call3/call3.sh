#!/usr/bin/env bash
# Session 34, call 3. The suite of tiles short of rows (tests/cpp/gpu/test_gpu_sm90_short_tiles.cpp,
# written for session 34's thin path and kept as a test of main's partial tiles) on main's kernels:
# the GPU gtests built from main with the suite added (kit s: the test binary only) against kit r's
# library (main at 9e3c3d5), sharded; then the wide-tile suite beside it as a control.
# carry: [".devbin/s34"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-r kit-s; do tar xJf .devbin/s34/$K.tar.xz -C /tmp || exit 1; done
pids=()
for i in $(seq 0 7); do
  LD_LIBRARY_PATH=/tmp/kit-r GTEST_FILTER='*Sm90ShortTiles*:*Sm90WideTiles*' GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i \
    timeout -k 5 150 /tmp/kit-s/bin/flashvision_gpu_tests > /tmp/sel-$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "job rc=$?"; done
cat /tmp/sel-*.txt > $R/gtests-short-tiles.txt
echo "== short-tile and wide suites on main's kernels $(el)"
grep -h "^\[  PASSED" /tmp/sel-*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/sel-*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/sel-*.txt | sort -u | head -30
grep -h "^\[       OK \]" /tmp/sel-*.txt | grep ShortTiles
tar czf "$OUT/results.tgz" -C $R .
