#!/bin/bash
# Scratch: the helper threshold of the CPU forward's queue (FV_MIN_LEFT; unset = the branch's
# rule, 1 = main's behaviour), sd15-self-16 bf16 on the device's Xeon, trace build.
D=.devbin/cpu2
exec > >(tee $OUT/log.txt) 2>&1
pip install -q --no-deps --target /tmp/fvpkg $D/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/fvpkg${PYTHONPATH:+:$PYTHONPATH}
export FV_TRACE=1
CASE="--device cpu --dtype bf16 --case sd15-self-16"
echo "== CLI 16 threads"
for rep in 1 2; do for m in 1 auto 3; do
  echo "-- min_left $m"
  if [ $m = auto ]; then unset FV_MIN_LEFT; else export FV_MIN_LEFT=$m; fi
  $D/flashvision-cpu bench $CASE --no-naive --threads 16 --budget 1.5 2>&1 | grep -E "FV_TRACE|^sd15"
done; done
unset FV_MIN_LEFT
echo "== maps"; python3 $D/probe.py maps
echo "== python bench"
for rep in 1 2; do for m in 1 auto; do
  echo "-- min_left $m"
  if [ $m = auto ]; then unset FV_MIN_LEFT; else export FV_MIN_LEFT=$m; fi
  python3 -m flashvision.bench $CASE --impl flashvision --impl torch-cpu-sdpa --budget 1 --json $OUT/py-$m-$rep.json 2>&1 | grep -E "FV_TRACE|^sd15|geometric"
done; done
unset FV_MIN_LEFT
echo "== probe alone"; python3 $D/probe.py alone
echo "== probe interleaved"; python3 $D/probe.py interleaved
echo "== probe sleep-gap"; python3 $D/probe.py sleep-gap
