#!/usr/bin/env bash
# Session 17's one device call: main's kit (GPU tests, CUDA pytest), then the benches.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
root=$(pwd)
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s17/kit.tar.xz -C / || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-full/python/_C*.so /tmp/pkg/flashvision/ || exit 1
export PYTHONPATH=/tmp/pkg:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import flashvision, diffusers; print(flashvision.__version__, flashvision.compiled_backends(), diffusers.__version__)"
echo "$(el) kit ready"
bin=/tmp/kit-full/bin/flashvision_gpu_tests
echo "gtest cases: $("$bin" --gtest_list_tests | grep -c "^  ")"
# GPU tests (12 shards) and the CUDA pytest files side by side: correctness only, no timing.
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 "$bin" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
(cd "$root" && timeout -k 5 170 python3 -m pytest -q -p no:cacheprovider tests/python/test_cuda.py tests/python/test_cuda_graphs.py tests/python/test_integrations_cuda.py >"$OUT/pytest-cuda.txt" 2>&1; echo "pytest rc=$?" >>"$OUT/pytest-cuda.txt") &
pyp=$!
for p in "${pids[@]}"; do wait "$p"; echo "shard rc=$?"; done
cat /tmp/shard*.txt > "$OUT/gtests.txt"
grep -h "^\[  PASSED\|^\[  FAILED\|^\[       OK\|^\[  SKIPPED" /tmp/shard*.txt | cut -c1-14 | sort | uniq -c; grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
wait $pyp; tail -3 "$OUT/pytest-cuda.txt"
echo "$(el) tests done"
# Benchmarks alone on the GPU.
for r in 1 2 3; do
  timeout -k 5 60 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash \
    --cuda-graphs --budget 0.3 --case sd15-self-16 --case sd15-self-32 --case sweep-d256-n1024 \
    --json "$OUT/sm80-small-r$r.json" 2>&1 | grep -E "flashvision|sdpa" | grep -v Warn
done
echo "$(el) sm80 repeats done"
timeout -k 5 190 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --backward --cuda-graphs --budget 0.2 --json "$OUT/default-graphs.json" 2>&1 | grep -v "Warning\|return F\."
echo "$(el) all done"
