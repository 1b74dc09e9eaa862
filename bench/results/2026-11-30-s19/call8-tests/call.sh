#!/usr/bin/env bash
# Session 19, device call 8: the final build's whole CPU test suite on native AMX tiles (the
# 256-key AMX blocks), and the Python tests on CPU tensors with the device's torch.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s19/kit-final.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-final && cp -r python/flashvision /tmp/pkg-final/ && cp /tmp/kit-final/python/_C*.so /tmp/pkg-final/flashvision/
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-final:/tmp/site LD_LIBRARY_PATH=/tmp/kit-final
timeout -k 5 240 /tmp/kit-final/bin/flashvision_tests > /tmp/cputests.txt 2>&1; echo "cpu gtests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" /tmp/cputests.txt | head; grep -E "OK \] CpuAmx" /tmp/cputests.txt | head -12
timeout -k 5 240 python3 -m pytest -q -p no:cacheprovider tests/python --ignore=tests/python/test_cuda.py --ignore=tests/python/test_cuda_graphs.py --ignore=tests/python/test_integrations_cuda.py -x 2>&1 | tail -5
