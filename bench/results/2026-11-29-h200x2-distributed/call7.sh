#!/usr/bin/env bash
# Device call 7 (nvidia-h200-x2): flashvision.distributed over NCCL on 2 H200 — the 2-GPU test,
# weak scaling at 64k tokens per GPU (D=128, 24 heads, ring and Ulysses, fwd and fwd+bwd), strong
# scaling at 128k tokens, and the longest sequence that runs (ring, forward).
set -uo pipefail
O=/tmp/o7; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $S
nvidia-smi topo -m > $O/topo.txt 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
timeout 150 python3 -m pytest "tests/python/test_distributed.py::test_nccl_gpus" -q -p no:cacheprovider -rs \
  > $O/pytest_nccl.log 2>&1
echo "pytest nccl rc=$? $(tail -1 $O/pytest_nccl.log) ($(( $(date +%s)-t0 ))s)" | tee -a $S
run() {  # name nproc args...
  local name=$1 n=$2; shift 2
  timeout 150 python3 -m torch.distributed.run --standalone --nproc-per-node $n bench/ring_scaling.py \
    "$@" --out $O/$name.json > $O/$name.log 2>&1
  echo "$name rc=$? ($(( $(date +%s)-t0 ))s): $(grep -i "effic" $O/$name.log | tail -3 | tr '\n' ' ')" | tee -a $S
}
run weak_ring_w1 1 --impl ring --mode weak --tokens 65536 --backward --repeats 3
run weak_ring_w2 2 --impl ring --mode weak --tokens 65536 --backward --repeats 3
run weak_ulysses_w2 2 --impl ulysses --mode weak --tokens 65536 --backward --repeats 3
run strong_ring_w2 2 --impl ring --mode strong --tokens 131072 --backward --repeats 3
run max_ring_w2 2 --impl ring --mode max --tokens 65536 --max-seconds 8 --repeats 2
echo "done $(( $(date +%s)-t0 ))s" | tee -a $S
tar czf $OUT/call7.tgz -C $O .
