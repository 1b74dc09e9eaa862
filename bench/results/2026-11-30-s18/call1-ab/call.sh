#!/usr/bin/env bash
# Session 18, device call 1: the GPU tests of two issue-5 candidates (lazy rescale, paired epilogue
# stores), then main / lazy / pairs alternated by process against cuDNN (forward, CUDA graphs),
# the sm80 forward (lazy rescale touches it) against FA2, and the CPU AMX experiment
# (FV_AMX_EXP 0..3) against torch's CPU SDPA.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
root=$(pwd)
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in main lazy pairs cpu; do tar xJf .devbin/s18/kit-$k.tar.xz -C /tmp || exit 1; done
for k in main lazy pairs cpu; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use main; python3 -c "import flashvision as f; print(f.__version__, f.__build_commit__, f.compiled_backends())"
use lazy; python3 -c "import flashvision as f; print(f.__build_commit__)"
use pairs; python3 -c "import flashvision as f; print(f.__build_commit__)"
echo "$(el) kits ready"
for k in lazy pairs; do
  use $k; bin=/tmp/kit-$k/bin/flashvision_gpu_tests
  shards=12; pids=()
  for i in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 "$bin" >/tmp/$k-shard$i.txt 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
  cat /tmp/$k-shard*.txt | gzip > "$OUT/gtests-$k.txt.gz"
  echo "== $k gtests"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[       OK\|^\[  SKIPPED" /tmp/$k-shard*.txt | cut -c1-14 | sort | uniq -c
  grep -h "^\[  FAILED" /tmp/$k-shard*.txt | sort -u | head -20
  echo "$(el) $k tests done"
done
GPU="--case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d128-n1024 --case sweep-d64-n1024 --case sweep-d128-n16384 --case sweep-d256-n16384 --case sdxl-cross --case sd15-cross-64 --case vit-b16-224 --case sdxl-self-128 --case flux-1024 --case vit-h14-224 --case sd15-self-16 --case dit-xl2-512"
n=0
for k in main lazy pairs pairs lazy main; do
  n=$((n+1)); use $k
  timeout -k 5 70 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 $GPU \
    --json "$OUT/gpu-$n-$k.json" > /tmp/gpu-$n.txt 2>&1; echo "== gpu run $n $k rc=$?"
  grep -E "^ *(sweep|sd|vit|dit|flux|video|vae)" /tmp/gpu-$n.txt | head -40
done
echo "$(el) sm90 A/B done"
SM80="--case sweep-d128-n4096 --case sweep-d256-n1024 --case sweep-d64-n4096 --case sd15-self-32 --case sdxl-self-128 --case dit-xl2-512"
for k in main lazy lazy main; do
  n=$((n+1)); use $k
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --cuda-graphs --budget 0.2 $SM80 \
    --json "$OUT/sm80-$n-$k.json" > /tmp/sm80-$n.txt 2>&1; echo "== sm80 run $n $k rc=$?"
  grep -E "^ *(sweep|sd|vit|dit|flux)" /tmp/sm80-$n.txt | head -20
done
echo "$(el) sm80 A/B done"
echo "== CPU tests on native AMX (FV_AMX_EXP 1 and 3)"
for e in 1 3; do FV_AMX_EXP=$e LD_LIBRARY_PATH=/tmp/kit-cpu/testlib timeout -k 5 120 /tmp/kit-cpu/bin/flashvision_tests --gtest_filter='CpuAmx*:*bf16*:*Bf16*' > /tmp/cputests-$e.txt 2>&1; echo "exp $e rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " /tmp/cputests-$e.txt; done
cat /tmp/cputests-*.txt | gzip > "$OUT/cpu-tests.txt.gz"
CPU="--case vae-mid-512 --case sd15-self-16 --case sd15-self-32 --case flux-1024 --case vit-b16-224"
use cpu
for e in 0 1 2 3 3 2 1 0; do
  n=$((n+1))
  FV_AMX_EXP=$e timeout -k 5 60 python3 -m flashvision.bench --device cpu --dtype bf16 $CPU --budget 0.3 \
    --json "$OUT/cpu-$n-exp$e.json" > /tmp/cpu-$n.txt 2>&1; echo "== cpu run $n exp $e rc=$?"
  grep -E "flashvision |torch-cpu" /tmp/cpu-$n.txt | head -12
done
echo "$(el) all done"
