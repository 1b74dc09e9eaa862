#!/bin/bash
# Session 12 call G: where the sm90 forward's time goes on the cross-attention cases (sdxl-cross,
# sd15-cross-64), main's CLI: one launch under Nsight Compute.
D=.devbin/s12g
exec > >(tee $OUT/log.txt) 2>&1
for cs in sdxl-cross sd15-cross-64; do
  echo "== ncu $cs"
  timeout 100 ncu --kernel-name regex:fwd_kernel --launch-skip 5 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section SourceCounters --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max" $D/flashvision bench --device cuda --no-naive --budget 0.05 --repeat 8 --case $cs > /tmp/n.txt 2>&1
  grep -vE "^==PROF==|^\s*$" /tmp/n.txt | grep -E "stalled|Duration|Elapsed Cycles|SM Active|issue_active|Grid Size|Block Size|Registers|Throughput|Warp Stall|Stall|0x|Theoretical Occ|Achieved Occ|cycles" | awk '$NF+0 > 0.04 || !/stalled/' | head -70
done
