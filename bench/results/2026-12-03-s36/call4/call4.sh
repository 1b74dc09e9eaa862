#!/usr/bin/env bash
# Session 36, call 4. Kit w: what lands on main (d0b809d: kit v's code formatted, its
# comments mended, and the half-tile and value-slice suites' varlen case shared as
# ragged_varlen_case). Every GPU gtest and the Python suite on it.
# carry: [".devbin/s36"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s36/kit-w.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-w && cp -r python/flashvision /tmp/pkg-w/ && cp /tmp/kit-w/python/_C*.so /tmp/pkg-w/flashvision/
export PYTHONUNBUFFERED=1
T=/tmp/kit-w/bin/flashvision_gpu_tests
(PYTHONPATH=/tmp/pkg-w LD_LIBRARY_PATH=/tmp/kit-w timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-w.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-w.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-w GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-w.txt.gz
echo "== kit-w GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-w.txt
echo "$(el) done"; save
