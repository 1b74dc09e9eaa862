#!/usr/bin/env bash
# Session 6, call 2: why the CPU forward is slower in the Python bench than in the CLI
# (cpu_probe.py), with and without torch's huge-page CPU allocator.
set -uo pipefail
O=/tmp/o2; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call2.tgz -C $O . 2>/dev/null' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/flashvision-*.whl > $O/pip.log 2>&1
export PYTHONPATH=/tmp/site
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1 | tee -a $S
uname -r | tee -a $S
P=$(pwd)/.devbin/s6/cpu_probe.py; (cd /tmp && timeout -k 5 150 python3 $P 2>&1 | tee -a $S)
echo "--- THP_MEM_ALLOC_ENABLE=1" | tee -a $S
(cd /tmp && THP_MEM_ALLOC_ENABLE=1 timeout -k 5 150 python3 $P 2>&1 | tee -a $S)
