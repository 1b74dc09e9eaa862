#!/usr/bin/env bash
# Session 6, call 13: the Python package of main (3ae58a2; buckets 32..256 and 512, sm_90): its
# test suite on CUDA, then `python -m flashvision.bench --case all --backward` against every SDPA
# backend and naive.
set -uo pipefail
O=/tmp/o13; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call13.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl .whl/diffusers-*.whl .whl/importlib_metadata-*.whl .whl/lazy_importer-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
timeout -k 5 160 python3 -m pytest tests/python -q -p no:cacheprovider -rs > $O/pytest_all.log 2>&1
echo "pytest rc=$? $(tail -1 $O/pytest_all.log) ($(el))" | tee -a $S
grep -E "^FAILED|^ERROR" $O/pytest_all.log | head -10 | tee -a $S
(cd /tmp && FV_COMMIT=3ae58a2 timeout -k 5 150 python3 -m flashvision.bench --device cuda --case all --backward --budget 0.05 \
  --json $O/bench-gpu.json --plots $O/plots-gpu > $O/bench-gpu.txt 2>&1)
echo "gpu bench rc=$? ($(el))" | tee -a $S
grep -E "^\S+\s+flashvision " $O/bench-gpu.txt | cut -c1-150 | tee -a $S
tail -1 $O/bench-gpu.txt | tee -a $S
