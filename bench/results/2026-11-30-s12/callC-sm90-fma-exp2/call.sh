#!/bin/bash
# Session 12 call C: the sm90 forward with a share of the softmax's exponentials on the FP32 pipe
# (FV_FMA eighths, scratch runtime switch) against main's binary, alternated.
D=.devbin/s12c
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
CASES="--case sweep-d64-n4096 --case sdxl-self-128 --case vit-b16-224 --case vit-l14-336 --case sd15-self-64 --case dit-xl2-512 --case vit-h14-224 --case flux-1024 --case sweep-d128-n4096"
n=0
for cfg in main fma0 fma2 fma3 fma4 fma8 main fma3 fma4 fma2 fma3 main; do
  n=$((n+1))
  if [ $cfg = main ]; then bin=$D/flashvision-main; f=0; else bin=$D/flashvision-fma; f=${cfg#fma}; fi
  FV_FMA=$f timeout 90 $bin bench --device cuda --no-naive --budget 0.6 $CASES --json $OUT/$n-$cfg.json > /tmp/$n.txt 2>&1
  echo "== $n $cfg"; grep -E "flashvision" /tmp/$n.txt | head -12
done
echo "== accuracy: f16 and causal, FMA 8 vs main"
for cfg in main fma8; do
  if [ $cfg = main ]; then bin=$D/flashvision-main; f=0; else bin=$D/flashvision-fma; f=8; fi
  FV_FMA=$f timeout 60 $bin bench --device cuda --no-naive --budget 0.2 --dtype f16 --case sweep-d64-n1024 --case vit-b16-224 --case dit-xl2-512 > /tmp/a.txt 2>&1; echo "-- $cfg f16"; grep flashvision /tmp/a.txt
  FV_FMA=$f timeout 60 $bin bench --device cuda --no-naive --budget 0.2 --causal --case sweep-d64-n1024 --case sd15-self-64 --shape 3,5,333,517,64 --shape 2,3,77,1000,80 > /tmp/a.txt 2>&1; echo "-- $cfg causal"; grep flashvision /tmp/a.txt
  FV_FMA=$f timeout 60 $bin bench --device cuda --no-naive --budget 0.2 --shape 3,5,333,517,64 --shape 2,3,77,1000,80 --shape 1,2,4096,4096,48 > /tmp/a.txt 2>&1; echo "-- $cfg odd"; grep flashvision /tmp/a.txt
done
tar czf $OUT/json.tgz -C $OUT $(cd $OUT; ls *.json) && rm -f $OUT/*.json
