#!/usr/bin/env bash
# Session 7, call 2: the raw metrics of call 1's profiles (stall reasons), per-instruction stall
# samples (SASS source page) of the sm80 backward against FA2's at D=256 and D=64, and the spread
# of SM active cycles (tail) of the sm80 forward against FA2's on flux-1024.
set -uo pipefail
O=/tmp/s7o2; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call2.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
for r in .devbin/s7/ncu1/*.ncu-rep; do n=$(basename $r .ncu-rep)
  ncu --import $r --page raw --csv > $O/$n.raw.csv 2>&1; done
echo "raw pages ($(el))" | tee -a $S
B=.devbin/s7/base/flashvision
CLI="--device cuda --no-naive --repeat 4 --warmup 1 --budget 0.05"
src() { name=$1; kre=$2; shift 2
  timeout -k 5 120 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight -k "regex:$kre" --launch-skip 2 --launch-count 1 -o $O/$name "$@" > $O/$name.run.log 2>&1
  echo "$name rc=$? ($(el))" | tee -a $S
  ncu --import $O/$name.ncu-rep --page source --print-source sass --csv > $O/$name.sass.csv 2>&1
  ncu --import $O/$name.ncu-rep --page raw --csv > $O/$name.raw.csv 2>&1
}
src sm80_bwd_d256 bwd_kernel $B bench $CLI --kernel sm80 --backward --backward-kernel sm80 --case sweep-d256-n4096
src fa2_bwd_d256 flash_bwd_dq_dk_dv python3 .devbin/s7/fa2_run.py 4 8 4096 256
src sm80_bwd_d64 bwd_kernel $B bench $CLI --kernel sm80 --backward --backward-kernel sm80 --case sweep-d64-n4096
src fa2_bwd_d64 flash_bwd_dq_dk_dv python3 .devbin/s7/fa2_run.py 4 32 4096 64
src sm80_fwd_d256 fwd_kernel $B bench $CLI --kernel sm80 --case sweep-d256-n4096
src fa2_fwd_d256 flash_fwd_kernel python3 .devbin/s7/fa2_run.py 4 8 4096 256
M=sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,gpc__cycles_elapsed.max
timeout -k 5 60 ncu --metrics $M -k regex:fwd_kernel --launch-skip 2 --launch-count 1 $B bench $CLI --kernel sm80 --case flux-1024 > $O/flux_active_fv.txt 2>&1
timeout -k 5 60 ncu --metrics $M -k regex:flash_fwd_kernel --launch-skip 2 --launch-count 1 python3 .devbin/s7/fa2_run.py 1 24 4608 128 > $O/flux_active_fa2.txt 2>&1
grep -hE "sm__cycles|gpc__" $O/flux_active_*.txt | tee -a $S
echo "done ($(el))" | tee -a $S
