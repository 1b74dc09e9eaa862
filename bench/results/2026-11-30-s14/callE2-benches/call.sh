#!/bin/bash
# Session 14 call E2: the benches with kit e/ (main + the row-fast backward preprocess).
# (1) issue 3: sm80 kernels against FA2, fwd and fwd+bwd, do_bench as usual and of CUDA graph
# replays; (2) the default kernels against FA2 and cuDNN, fwd and fwd+bwd; (3) sm80 forward tile
# and K/V layout variants on the two cases where it tied FA2.
D=.devbin/s14
E=$D/e
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$E/pkg
B="python3 -m flashvision.bench --device cuda --budget 0.3"
echo "== sm80 vs FA2 (do_bench)"
timeout -k 5 120 $B --kernel sm80 --impl flashvision --impl sdpa-flash --backward --json $OUT/sm80.json 2>&1 | grep -v Warn | tail -48
echo "== sm80 vs FA2 (CUDA graphs)"
timeout -k 5 140 $B --kernel sm80 --impl flashvision --impl sdpa-flash --backward --cuda-graphs --json $OUT/sm80-graphs.json 2>&1 | grep -v Warn | tail -48
echo "== default vs FA2, cuDNN"
timeout -k 5 170 $B --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --backward --json $OUT/default.json 2>&1 | grep -v Warn | tail -3
for v in "FLASHVISION_SM80_FWD_TILE=0" "FLASHVISION_SM80_FWD_TILE=1" "FLASHVISION_SM80_FWD_KV=padded" "FLASHVISION_SM80_FWD_SPLIT=0"; do
  echo "== sm80 forward with $v"
  env $v timeout -k 5 40 $B --kernel sm80 --impl flashvision --impl sdpa-flash --case vit-b16-224 --case sweep-d256-n1024 --case vit-l14-336 2>&1 | grep -E "^(vit|sweep)"
done
