#!/usr/bin/env bash
# Session 6, call 5: the CPU forward's block sizes on the device's 16-core Xeon (2 MiB L2 per
# core), through FLASHVISION_CPU_FWD_BLOCKS, two rounds.
set -uo pipefail
O=/tmp/o5; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call5.tgz -C $O . 2>/dev/null' EXIT
FV=.devbin/cpucli/flashvision; export LD_LIBRARY_PATH=$(pwd)/.devbin/cpucli
CASES="--case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case vit-l14-336 --shape 1,16,4096,4096,128"
for round in 1 2; do
  for cfg in default 96,64 96,128 96,256 192,64 192,128 192,256 384,64 384,128 384,256; do
    if [ $cfg = default ]; then unset FLASHVISION_CPU_FWD_BLOCKS; else export FLASHVISION_CPU_FWD_BLOCKS=$cfg; fi
    timeout -k 5 60 $FV bench --device cpu --no-naive --budget 0.6 $CASES > $O/r${round}_$cfg.txt 2>&1
    echo "r$round $cfg: $(awk '$3=="flashvision" && $5=="fwd" {printf "%s %s  ", $1, $8}' $O/r${round}_$cfg.txt)" | tee -a $S
  done
done
