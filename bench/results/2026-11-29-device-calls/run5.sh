#!/usr/bin/env bash
# Device call 5: the Python package (wheel built on the dev machine, CUDA sm_90) with diffusers
# carried: the whole pytest suite on the GPU machine, then python -m flashvision.bench on a few
# image cases against every SDPA backend.
set -uo pipefail
S=$OUT/summary.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $OUT/pip.log 2>&1 || { echo "pip failed" | tee -a $S; exit 1; }
export PYTHONPATH=/tmp/site
python3 -c "import flashvision, torch, diffusers; print('flashvision', flashvision.__version__ if hasattr(flashvision,'__version__') else '', 'diffusers', diffusers.__version__, 'kernel', flashvision.selected_kernel(*(torch.randn(1,16,2,64,device='cuda',dtype=torch.bfloat16),)*3))" 2>&1 | tail -1 | tee -a $S
PYTHONUNBUFFERED=1 timeout 200 python3 -m pytest tests/python -q -p no:cacheprovider > $OUT/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $OUT/pytest.log)" | tee -a $S
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20 >> $S
PYTHONUNBUFFERED=1 timeout 120 python3 -m flashvision.bench --device cuda --backward --budget 0.15 --case vit-b16-224 --case sd15-cross-64 --case sd15-self-64 --case dit-xl2-512 --case flux-1024 --json $OUT/pybench.json > $OUT/pybench.txt 2>&1
echo "pybench rc=$?" | tee -a $S
