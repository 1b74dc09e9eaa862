#!/usr/bin/env bash
# Device call 9: the Python package of d65639c (eager SDPA calls without transposes) — the whole
# Python suite on the GPU machine, the host-time probe, and the Python bench on two short cases.
set -uo pipefail
O=/tmp/o9; mkdir -p $O; S=$O/summary.txt
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl .whl/diffusers-*.whl .whl/importlib_metadata-*.whl .whl/lazy_importer-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
timeout 330 python3 -m pytest tests/python -q -p no:cacheprovider -rs -x > $O/pytest_all.log 2>&1
echo "pytest all rc=$? $(tail -1 $O/pytest_all.log) ($(( $(date +%s)-t0 ))s)" | tee -a $S
timeout 100 python3 bench/python_call_overhead.py sd15-cross-64 vit-b16-224 > $O/overhead.txt 2>&1
echo "overhead rc=$?" | tee -a $S; grep -E "^==|us   host" $O/overhead.txt | tee -a $S
timeout 100 python3 -m flashvision.bench --device cuda --backward --budget 0.15 --case vit-b16-224 \
  --case sd15-cross-64 --impl flashvision --impl sdpa-cudnn --impl sdpa-flash --impl sdpa-efficient \
  --json $O/py_bench.json > $O/py_bench.txt 2>&1
echo "python bench rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a $S
grep -E "flashvision " $O/py_bench.txt | tee -a $S
tar czf $OUT/call9.tgz -C $O .
