#!/usr/bin/env bash
# Session 18, device call 4: the final candidate (lazy max at sm80 buckets 64/128/256 only, main's
# code elsewhere) tested whole, the sm80 short cases against main, the CPU's AMX change against main
# alternated by process, and the two CPU cases call 3's full run did not reach.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in base cand2; do tar xJf .devbin/s18/kit-$k.tar.xz -C /tmp || exit 1; done
for k in base cand2; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
for k in base cand2; do use $k; python3 -c "import flashvision as f; print('$k', f.__build_commit__)"; done
use cand2
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 /tmp/kit-cand2/bin/flashvision_gpu_tests >/tmp/c2shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/c2shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/c2shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/c2shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/c2shard*.txt | sort -u | head -20
echo "$(el) GPU tests done"; save
n=0
for k in base cand2; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --cuda-graphs --budget 0.2 \
    --case sd15-self-16 --case sd15-self-32 --case sweep-d128-n4096 --case sweep-d256-n1024 --json $R/sm80-$n-$k.json > $R/sm80-$n-$k.txt 2>&1
  echo "== sm80 $n $k rc=$?"; grep -E "flashvision |sdpa-flash " $R/sm80-$n-$k.txt | awk '{print $1, $2, $4, $5}' | paste -sd' '
done
echo "$(el) sm80 done"; save
CPU="--case vae-mid-512 --case sd15-self-16 --case flux-1024"
for k in cand2 base base cand2 cand2 base; do
  n=$((n+1)); use $k
  timeout -k 5 30 python3 -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa $CPU --budget 0.3 --json $R/cpu-ab-$n-$k.json > $R/cpu-ab-$n-$k.txt 2>&1
  echo "== cpu ab $n $k rc=$?"; grep -E "flashvision " $R/cpu-ab-$n-$k.txt | awk '{print $1, $4, $5, $9}' | paste -sd' '
done
echo "$(el) CPU A/B done"; save
use cand2
timeout -k 5 100 python3 -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa --budget 0.3 \
  --case vae-mid-512 --case video-49f-720p --json $R/cand2-cpu-rest.json > $R/cand2-cpu-rest.txt 2>&1; echo "cpu rest rc=$?"
grep -E "flashvision |torch-cpu" $R/cand2-cpu-rest.txt
echo "$(el) all done"; save
