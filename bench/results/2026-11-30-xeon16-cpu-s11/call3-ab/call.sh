#!/bin/bash
# Scratch: A/B of the CPU queue's helper threshold in one process, then the issue-4 bench.
D=.devbin/cpu3
exec > >(tee $OUT/log.txt) 2>&1
pip install -q --no-deps --target /tmp/fvpkg $D/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/fvpkg${PYTHONPATH:+:$PYTHONPATH}
echo "== ab 1"; python3 $D/ab.py 12
echo "== ab 2"; python3 $D/ab.py 12
for rep in 1 2; do
  echo "== bench run $rep"
  python3 -m flashvision.bench --device cpu --dtype bf16 --case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --impl flashvision --impl torch-cpu-sdpa --budget 1 --json $OUT/bench-$rep.json 2>&1 | grep -E "^(sd15|vit)|geometric"
done
