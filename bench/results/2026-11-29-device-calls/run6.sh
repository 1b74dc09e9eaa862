#!/usr/bin/env bash
# Device call 6: why test_distributed.py fails on the GPU machine (autograd + fork in the ranks).
set -uo pipefail
S=$OUT/summary.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/flashvision-*.whl > $OUT/pip.log 2>&1 || exit 1
export PYTHONPATH=/tmp/site
timeout 60 python3 -m pytest tests/python/test_distributed.py -q -p no:cacheprovider -k "matches and n16" > $OUT/alone.log 2>&1
echo "alone (forkserver): rc=$? $(tail -1 $OUT/alone.log)" | tee -a $S
timeout 90 python3 -m pytest tests/python/test_cuda.py tests/python/test_distributed.py -q -p no:cacheprovider -k "not distributed or (matches and n16)" -x > $OUT/after_cuda.log 2>&1
echo "after CUDA tests (forkserver): rc=$? $(tail -1 $OUT/after_cuda.log)" | tee -a $S
sed -i 's/start_method="forkserver"/start_method="spawn"/' tests/python/test_distributed.py
timeout 120 python3 -m pytest tests/python/test_cuda.py tests/python/test_distributed.py -q -p no:cacheprovider -k "test_cuda or (matches and n16)" > $OUT/spawn.log 2>&1
echo "after CUDA tests (spawn): rc=$? $(tail -1 $OUT/spawn.log)" | tee -a $S
