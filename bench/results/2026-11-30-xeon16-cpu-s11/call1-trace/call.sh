#!/bin/bash
# Scratch: CPU forward probe on the device's Xeon (sd15-self-16, bf16), trace build.
D=.devbin/cpu1
exec > >(tee $OUT/log.txt) 2>&1
lscpu | grep -E "Model name|Thread|Core|Socket|MHz|NUMA node0"
python3 -m venv --system-site-packages /tmp/venv && /tmp/venv/bin/pip install -q --no-deps $D/*.whl
PY=/tmp/venv/bin/python
ls $(python3 -c "import torch,os;print(os.path.dirname(torch.__file__))")/lib | grep -i omp
export FV_TRACE=1
echo "== CLI"; for t in 16 8 4 1; do $D/flashvision-cpu bench --device cpu --dtype bf16 --case sd15-self-16 --no-naive --threads $t --budget 1.5 2>&1 | grep -E "FV_TRACE|sd15"; done
echo "== maps"; $PY $D/probe.py maps
for pol in default PASSIVE; do
  if [ $pol = PASSIVE ]; then export OMP_WAIT_POLICY=PASSIVE; fi
  echo "== policy $pol"
  echo "-- alone"; $PY $D/probe.py alone
  echo "-- interleaved"; $PY $D/probe.py interleaved
  echo "-- sleep-gap"; $PY $D/probe.py sleep-gap
  echo "-- bench"; $PY -m flashvision.bench --device cpu --dtype bf16 --case sd15-self-16 --impl flashvision --impl torch-cpu-sdpa --budget 1 2>&1 | grep -vE "^\s*$|it/s" | tail -8
done
unset OMP_WAIT_POLICY
echo "== GOMP_SPINCOUNT=1000000 bench"; GOMP_SPINCOUNT=1000000 $PY -m flashvision.bench --device cpu --dtype bf16 --case sd15-self-16 --impl flashvision --impl torch-cpu-sdpa --budget 1 2>&1 | tail -6
