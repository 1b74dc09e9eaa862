#!/usr/bin/env bash
# Session 19, device call 1: the candidate (main + text keys at bucket 48 + the D > 256 split)
# tested whole (GPU gtests incl. session 18's lazy-max test, CUDA pytest), then timed against main
# (base) by alternated processes with cuDNN and naive as peers, then the CPU forward of main
# against torch's CPU SDPA on every case (issue 4's one-run figure). Everything but log.txt goes
# into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in base cand; do tar xJf .devbin/s19/kit-$k.tar.xz -C /tmp || exit 1; done
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
grep -h "ScoresRisingAndFalling\|HeadDimsAbove256\|TextTokens" /tmp/shard*.txt | grep "OK\|FAILED" | head -20
wait $pyp; tail -3 $R/pytest-cuda.txt
echo "$(el) GPU tests done"; save
GPU="--case sd15-cross-64 --case sdxl-cross --case vae-mid-512 --case vit-b16-224 --case sd15-self-64 --case sweep-d64-n1024"
n=0
for k in base cand cand base; do
  n=$((n+1)); use $k
  timeout -k 5 80 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 $GPU \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5, $9}' | paste -sd' '
done
grep -v "Warning\|return F\." $R/ab-2-cand.txt | tail -30
echo "$(el) A/B done"; save
use cand
timeout -k 5 250 python3 -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa --budget 0.2 \
  --json $R/cpu-all.json > $R/cpu-all.txt 2>&1; echo "cpu-all rc=$?"; grep -v "Warning" $R/cpu-all.txt | tail -32
echo "$(el) CPU run done"; save
echo "$(el) all done"
