#!/usr/bin/env bash
# Session 6, call 7 (CPU part): huge pages for the CPU passes' outputs, A/B through the PyTorch
# op against torch's CPU SDPA (cpu_ab.py, interleaved calls), the session-5 wheel ("old") against
# a CPU-only wheel of this tree ("new"), two rounds.
set -uo pipefail
S=$OUT/summary.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_old .whl/flashvision-*.whl > /dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_new .devbin/s6/whl-cpu/flashvision-*.whl > /dev/null 2>&1
P=$(pwd)/.devbin/s6/cpu_ab.py
for round in 1 2; do
  for v in old new; do
    echo "--- $v round $round" | tee -a $S
    (cd /tmp && PYTHONPATH=/tmp/site_$v timeout -k 5 120 python3 $P 9 2>&1 | tee -a $S)
  done
done
