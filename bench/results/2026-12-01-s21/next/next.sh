#!/usr/bin/env bash
# For the next session's first device call: two versions of the softmax without a per-score max,
# each tested (GPU gtests, 12 shards; memcheck on its new tests) and timed against main (kit main)
# and the unguarded prototype (kit stale): kit next = branch wip/sm90-stale-max at cf17c0f (a
# bound from key norms, a pass over K), kit x = branch wip/sm90-stale-x at 58b77bb (no bound: the
# exponents kept in the score registers recover an overflow). Kernel by kernel on the long cases
# (kernel_times.py), then every case with cuDNN, alternated main next x stale main, 0.1 s per
# measurement. Everything but log.txt goes into results.tgz.
# carry: [".devbin/s20/kit-main.tar.xz", ".devbin/s21/kit-next.tar.xz", ".devbin/s21/kit-x.tar.xz",
#         ".devbin/s21/kit-stale.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-12-01-s21/next
R=/tmp/resn; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in main next x stale; do
  tar xJf .devbin/s2*/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
gtests() {  # kit, memcheck filter
  local shards=12 pids=()
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 /tmp/kit-$1/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
  cat /tmp/shard*.txt | gzip > $R/gtests-$1.txt.gz
  echo "== GPU gtests $1"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c
  grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'; grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
  timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/kit-$1/bin/flashvision_gpu_tests --gtest_filter="$2" > /tmp/san.txt 2>&1
  echo "== memcheck $1 rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " /tmp/san.txt
}
gtests next '*ScoreBound*/bf16_sm90:*TightNormBound*/bf16_sm90'
gtests x '*ScoresRisingFarOverKeyBlocks*/bf16_sm90:*ScoresRisingAndFalling*/bf16_sm90'
echo "$(el) tests done"; save
for k in next x stale main; do
  use $k; timeout -k 5 100 python3 $D/kernel_times.py sweep-d128-n4096 sweep-d128-n16384 flux-2048 sweep-d64-n16384 > $R/kernels-$k.txt 2>&1
  echo "== kernels $k rc=$?"; grep -E "fwd_kernel|key_norm" $R/kernels-$k.txt | cut -c1-120
done
save
n=0
for k in main next x stale main; do
  n=$((n+1)); use $k
  timeout -k 5 80 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.1 \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) all done"; save
