#!/usr/bin/env bash
D=.devbin/probe-torch
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $D/*.whl || exit 1
S=$OUT/summary.txt
(cd /tmp && PYTHONPATH=/tmp/site timeout 150 python3 -u $OLDPWD/$D/probe.py) 2>&1 | tee $S
(cd /tmp && PYTHONPATH=/tmp/site timeout 100 python3 -u -m flashvision.bench --device cpu --impl torch-cpu-sdpa --case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --budget 1 --json $OUT/torch-only.json 2>&1 | grep -E "^(sd15|sdxl)") | tee -a $S
(cd /tmp && PYTHONPATH=/tmp/site timeout 100 python3 -u -m flashvision.bench --device cpu --impl flashvision --impl torch-cpu-sdpa --case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --budget 1 --json $OUT/both.json 2>&1 | grep -E "^(sd15|sdxl)") | tee -a $S
