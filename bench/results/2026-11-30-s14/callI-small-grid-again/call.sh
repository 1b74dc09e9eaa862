#!/bin/bash
# Session 14 call I: sd15-self-32 (sm80 forward, CUDA graphs) with the small-grid tile allowed
# (FLASHVISION_SM80_FWD_TILE=2, the default) and not (=1), alternated three times.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$D/g/pkg
B="python3 -m flashvision.bench --device cuda --budget 0.3 --cuda-graphs --kernel sm80 --impl flashvision --impl sdpa-flash --case sd15-self-32 --shape 2,5,1024,1024,128"
for round in 1 2 3; do
  for cap in 1 2; do
    echo "== round $round, FLASHVISION_SM80_FWD_TILE=$cap"
    FLASHVISION_SM80_FWD_TILE=$cap timeout -k 5 25 $B 2>&1 | grep -E "^(sd|shape)"
  done
done
