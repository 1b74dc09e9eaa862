#!/usr/bin/env bash
# Session 18, device call 2: the candidate main (main + lazy max + AMX pipelining) tested whole
# (GPU tests, CPU tests on native AMX, CUDA pytest with the integrations), then timed against
# main (base) and the peers. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in base cand; do tar xJf .devbin/s18/kit-$k.tar.xz -C /tmp || exit 1; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
for k in base cand; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1:/tmp/site LD_LIBRARY_PATH=/tmp/kit-$1; }
for k in base cand; do use $k; python3 -c "import flashvision as f, diffusers; print('$k', f.__build_commit__, f.compiled_backends(), diffusers.__version__)"; done
echo "$(el) kits ready"
use cand
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 /tmp/kit-cand/bin/flashvision_gpu_tests >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
(timeout -k 5 170 python3 -m pytest -q -p no:cacheprovider tests/python/test_cuda.py tests/python/test_cuda_graphs.py tests/python/test_integrations_cuda.py >$R/pytest-cuda.txt 2>&1; echo "pytest rc=$?" >>$R/pytest-cuda.txt) &
pyp=$!
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
wait $pyp; tail -3 $R/pytest-cuda.txt
echo "$(el) GPU tests done"
timeout -k 5 150 /tmp/kit-cand/bin/flashvision_tests > /tmp/cputests.txt 2>&1; echo "cpu tests rc=$?"
gzip -c /tmp/cputests.txt > $R/gtests-cpu.txt.gz; grep -E "^\[  (PASSED|FAILED|SKIPPED) " /tmp/cputests.txt | head; grep -c "cpu-amx\|NativeTiles" /tmp/cputests.txt
echo "$(el) CPU tests done"; save
GPU="--case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d64-n1024 --case sweep-d128-n16384 --case sweep-d256-n16384 --case sdxl-cross --case sd15-cross-64 --case vit-b16-224 --case sdxl-self-128 --case flux-1024"
n=0
for k in base cand cand base; do
  n=$((n+1)); use $k
  timeout -k 5 70 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 $GPU \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5, $9}' | paste -sd' '
done
echo "$(el) A/B done"; save
use cand
timeout -k 5 200 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --cuda-graphs --budget 0.2 \
  --json $R/cand-all-gpu.json > $R/cand-all-gpu.txt 2>&1; echo "all-gpu rc=$?"; grep -v "Warning\|return F\." $R/cand-all-gpu.txt | tail -60
echo "$(el) GPU full run done"; save
timeout -k 5 60 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --cuda-graphs --budget 0.2 \
  --case sweep-d128-n4096 --case sweep-d256-n1024 --case sweep-d64-n4096 --case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --case dit-xl2-512 \
  --json $R/cand-sm80.json > $R/cand-sm80.txt 2>&1; grep -E "flashvision |geometric" $R/cand-sm80.txt
echo "$(el) sm80 done"; save
echo "$(el) all done"
