#!/usr/bin/env bash
# Session 6, call 1: what the device's 16 CPUs are (SMT or not) and how flashvision's CPU forward
# and torch's CPU SDPA scale from 1 to 8 to 16 threads on the image cases under 1.5x.
set -uo pipefail
O=/tmp/o1; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call1.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
lscpu > $O/lscpu.txt 2>&1; cat $O/lscpu.txt | grep -E "Model name|Thread|Core|Socket|MHz|NUMA|L1d|L2|L3|Flags" | cut -c1-200 | tee -a $S
grep -o -w 'amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ' | tee -a $S; echo | tee -a $S
cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>&1 | tee -a $S
FV=.devbin/final/flashvision
for t in 16 8 4; do
  timeout -k 5 120 $FV bench --device cpu --threads $t --no-naive --budget 1.5 --case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 > $O/fv_t$t.txt 2>&1
  echo "fv threads $t ($(el))" | tee -a $S; grep -E "flashvision" $O/fv_t$t.txt | cut -c1-140 | tee -a $S
done
for t in 16 8 4; do
  for shp in "128 16 257 80" "2 8 1024 80" "2 8 256 160" "2 10 4096 64"; do
    timeout -k 5 60 python3 .devbin/s6/torch_sdpa_time.py $shp $t 15 2>&1 | tee -a $S
  done
done
echo "done ($(el))" | tee -a $S
