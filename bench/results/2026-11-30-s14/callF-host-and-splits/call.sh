#!/bin/bash
# Session 14 call F (kit e/pkg: main + the row-fast preprocess): (1) the host's time per piece
# of the torch path (host_micro.py); (2) the sm80 forward's split over the keys forced on the
# small grids where it trails or ties FA2 (CUDA-graph timing); (3) the default kernels fwd+bwd
# against FA2 and cuDNN with CUDA-graph timing.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$D/e/pkg
echo "== host micro"
timeout -k 5 90 python3 $D/host_micro.py 2>&1 | grep -v -i warn
B="python3 -m flashvision.bench --device cuda --budget 0.3 --cuda-graphs"
for s in auto 0 2 3 4; do
  echo "== sm80 forward, FLASHVISION_SM80_FWD_SPLIT=$s"
  FLASHVISION_SM80_FWD_SPLIT=$s timeout -k 5 60 $B --kernel sm80 --impl flashvision --impl sdpa-flash --case sd15-self-32 --case sd15-self-16 --case sweep-d256-n1024 --case vit-b16-224 --case sdxl-cross 2>&1 | grep -E "^(vit|sweep|sd)"
done
for s in 0 2; do
  echo "== sm90 forward, FLASHVISION_SM90_FWD_SPLIT=$s"
  FLASHVISION_SM90_FWD_SPLIT=$s timeout -k 5 60 $B --impl flashvision --case sd15-self-32 --case sd15-self-16 2>&1 | grep -E "^(vit|sweep|sd)"
done
echo "== default vs FA2, cuDNN, CUDA graphs"
timeout -k 5 200 $B --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --backward --json $OUT/default-graphs.json 2>&1 | grep -v Warn | tail -3
