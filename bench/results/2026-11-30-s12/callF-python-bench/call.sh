#!/bin/bash
# Session 12 call F: flashvision (CUDA wheel of main, sm_90, buckets 48..256) and SDPA's FA2 and
# cuDNN backends through the same harness, python -m flashvision.bench (triton do_bench, L2
# flushed), forward, on the image cases and the N=4096 sweep.
D=.devbin/s12f
exec > >(tee $OUT/log.txt) 2>&1
pip install -q --no-deps --target /tmp/fvc $D/*.whl 2>&1 | grep -v WARNING
CASES=""
for c in vit-b16-224 vit-l14-336 vit-h14-224 sd15-self-64 sd15-cross-64 sd15-self-32 sd15-self-16 sdxl-self-128 sdxl-cross dit-xl2-512 flux-1024 flux-2048 video-49f-720p sweep-d64-n4096 sweep-d128-n4096 sweep-d256-n4096; do CASES="$CASES --case $c"; done
for run in 2 3; do
  PYTHONPATH=/tmp/fvc${PYTHONPATH:+:$PYTHONPATH} timeout 280 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --budget 0.3 $CASES --json $OUT/fwd-$run.json > $OUT/fwd-$run.txt 2>&1
  echo "== run $run rc=$?"; grep -E "flashvision |sdpa-" $OUT/fwd-$run.txt | grep -v "^flashvision" | awk '{print $1, $2, $4, $5, $6}' | head -60
done
