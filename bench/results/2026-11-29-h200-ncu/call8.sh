#!/usr/bin/env bash
# Device call 8: Nsight Compute on the two kernels that limit the figures most — the sm80
# backward main kernel at D=128 N=4096 and the sm90 forward at D=64 N=4096 (one launch each).
set -uo pipefail
O=/tmp/o8; mkdir -p $O
B=.devbin/main/flashvision
timeout 200 ncu --kernel-name regex:bwd_kernel --launch-skip 3 --launch-count 1 --set full \
  --export $O/bwd_d128 $B bench --device cuda --kernel sm80 --backward --no-naive --repeat 3 --warmup 1 \
  --shape 4,16,4096,4096,128 > $O/ncu_bwd_run.log 2>&1
echo "bwd ncu rc=$?"
timeout 200 ncu --kernel-name regex:fwd_kernel --launch-skip 3 --launch-count 1 --set full \
  --export $O/fwd_d64 $B bench --device cuda --kernel sm90 --no-naive --repeat 3 --warmup 1 \
  --shape 4,32,4096,4096,64 > $O/ncu_fwd_run.log 2>&1
echo "fwd ncu rc=$?"
for r in bwd_d128 fwd_d64; do
  ncu --import $O/$r.ncu-rep --page details > $O/$r.txt 2>&1
  ncu --import $O/$r.ncu-rep --page raw --csv > $O/${r}_raw.csv 2>&1
done
rm -f $O/*.ncu-rep
tar czf $OUT/call8.tgz -C $O .
