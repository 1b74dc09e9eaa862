#!/bin/bash
# Session 12 call D: why the FMA binary at FV_FMA=0 (two inlined copies of the softmax: masked and
# unmasked blocks) ran 15 % slower than main: warp stall reasons (ncu) of one sm90 forward launch,
# and the SASS size of the fwd kernels.
D=.devbin/s12c
exec > >(tee $OUT/log.txt) 2>&1
for which in main fma; do
  echo "== SASS instructions per fwd_kernel ($which), largest"
  cuobjdump -sass $D/flashvision-$which 2>/dev/null | awk '/Function :/{if (cur) print n, cur; cur=$3; n=0} /\/\*[0-9a-f]+\*\/ /{n++} END{print n, cur}' | grep fwd_kernel | sort -n | tail -6 | cut -c1-160
done
for cs in sweep-d64-n4096 sdxl-self-128; do
  for which in main fma; do
    echo "== ncu $cs $which"
    FV_FMA=0 timeout 120 ncu --kernel-name regex:fwd_kernel --launch-skip 3 --launch-count 1 --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active" $D/flashvision-$which bench --device cuda --no-naive --budget 0.05 --repeat 5 --case $cs 2>&1 | grep -E "stalled|duration|inst_executed|issue_active|gmma" | awk '$NF+0 > 0.05 || /duration|inst_exec|issue_active|gmma/' | head -40
  done
done
