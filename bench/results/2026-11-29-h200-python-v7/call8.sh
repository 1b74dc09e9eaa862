#!/usr/bin/env bash
# Session 5, call 8: the Python package of main 1d7f9ce+ (the Hopper backward buckets and overlap,
# the D=80 wide forward tile, the sm80 tile variants; buckets 32..256 and 512): its test suite on
# CUDA, then `python -m flashvision.bench --case all --backward` against every SDPA backend.
set -uo pipefail
O=/tmp/o8; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call8.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl .whl/diffusers-*.whl .whl/importlib_metadata-*.whl .whl/lazy_importer-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
timeout -k 5 280 python3 -m pytest tests/python -q -p no:cacheprovider -rs > $O/pytest_all.log 2>&1
echo "pytest rc=$? $(tail -1 $O/pytest_all.log) ($(el))" | tee -a $S
grep -E "^FAILED|^ERROR" $O/pytest_all.log | head -10 | tee -a $S
C=$(cat .devbin/s5/commit.txt); (cd /tmp && FV_COMMIT=$C timeout -k 5 280 python3 -m flashvision.bench --device cuda --case all --backward --budget 0.05 \
  --json $O/bench-gpu.json --plots $O/plots-gpu > $O/bench-gpu.txt 2>&1)
echo "gpu bench rc=$? ($(el))" | tee -a $S
grep -E "^\S+\s+flashvision " $O/bench-gpu.txt | cut -c1-150 | tee -a $S
tail -1 $O/bench-gpu.txt | tee -a $S
