#!/bin/bash
# Scratch: the CPU queue fix on the device's Xeon: CPU tests on native AMX, an in-process A/B,
# torch's mode alone, the issue-4 bench with the branch's wheel.
D=.devbin/cpu4
exec > >(tee $OUT/log.txt) 2>&1
echo "== torch mode (no flashvision)"; python3 $D/torch_mode.py
ONEDNN_VERBOSE=1 python3 $D/torch_mode.py 2>&1 | grep -E "onednn_verbose" | cut -c1-160 | sort | uniq -c | sort -rn | head -8
echo "== CPU tests (native AMX where present)"
timeout 300 $D/flashvision_tests --gtest_brief=1 2>&1 | tail -15
pip install -q --no-deps --target /tmp/fvtrace $D/trace/*.whl 2>&1 | grep -v WARNING
pip install -q --no-deps --target /tmp/fvsteal $D/steal/*.whl 2>&1 | grep -v WARNING
echo "== ab (trace wheel: FV_MIN_LEFT=1 is main's queue)"
PYTHONPATH=/tmp/fvtrace${PYTHONPATH:+:$PYTHONPATH} python3 $D/ab.py 12
PYTHONPATH=/tmp/fvtrace${PYTHONPATH:+:$PYTHONPATH} python3 $D/ab.py 12
export PYTHONPATH=/tmp/fvsteal${PYTHONPATH:+:$PYTHONPATH}
for rep in 1 2; do
  echo "== issue-4 bench run $rep (branch wheel)"
  python3 -m flashvision.bench --device cpu --dtype bf16 --json $OUT/bf16-$rep.json > $OUT/bf16-$rep.txt 2>&1
  grep -E "flashvision |torch-cpu|geometric" $OUT/bf16-$rep.txt
done
