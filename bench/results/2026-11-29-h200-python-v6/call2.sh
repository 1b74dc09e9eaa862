#!/usr/bin/env bash
# Session 5, call 2: `python -m flashvision.bench` at the merge of the Hopper backward buckets
# (3c6c047's wheel): every BENCH.md case on the GPU, forward and fwd+bwd, against every SDPA
# backend and naive in one run (do_bench timing), with plots; the CPU comparison on the 16-core
# Xeon; then the sm80 D=256 variants (helper branch) against main's sm80 kernels, CLI.
set -uo pipefail
O=/tmp/o2; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call2.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a $S
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
timeout -k 5 330 python3 -m flashvision.bench --device cuda --case all --backward --budget 0.05 \
  --json $O/bench-gpu.json --plots $O/plots-gpu > $O/bench-gpu.txt 2>&1
echo "gpu bench rc=$? ($(el))" | tee -a $S
timeout -k 5 100 python3 -m flashvision.bench --device cpu --case vit-b16-224 --case vit-l14-336 --case vit-h14-224 \
  --case sd15-cross-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-cross --case dit-xl2-512 \
  --case sd15-self-64 --case sdxl-self-128 --budget 0.1 --json $O/bench-cpu.json > $O/bench-cpu.txt 2>&1
echo "cpu bench rc=$? ($(el))" | tee -a $S
if [ -f .devbin/s5/sm80.sh ]; then timeout -k 5 150 bash .devbin/s5/sm80.sh $O >> $S 2>&1; echo "sm80 variants rc=$? ($(el))" | tee -a $S; fi
