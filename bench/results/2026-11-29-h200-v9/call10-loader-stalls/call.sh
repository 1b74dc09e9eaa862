#!/usr/bin/env bash
# Session 7, call 10: why both sm80 forward loader branches ran D=256 15 % slower: per-SASS stall
# samples of the D=256 forward of main's binary and of wip/sm80-fwd-loader2's.
set -uo pipefail
O=/tmp/s7o10; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call10.tgz -C $O . 2>/dev/null' EXIT
D=.devbin/sm80-fwd-loader2/x; mkdir -p $D
python3 -c "import tarfile; tarfile.open('.devbin/sm80-fwd-loader2/carry/bins.tar.xz').extractall('$D')"
CLI="--device cuda --no-naive --repeat 4 --warmup 1 --budget 0.05 --kernel sm80 --case sweep-d256-n4096"
for v in base wip; do bin=.devbin/s7/base/flashvision; [ $v = wip ] && bin=$D/flashvision
  timeout -k 5 100 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section LaunchStats --section Occupancy -k regex:fwd_kernel --launch-skip 2 --launch-count 1 -o $O/$v $bin bench $CLI > $O/$v.run.log 2>&1
  echo "$v rc=$?" | tee -a $S
  ncu --import $O/$v.ncu-rep --page source --print-source sass --csv > $O/$v.sass.csv 2>&1
  ncu --import $O/$v.ncu-rep --page raw --csv > $O/$v.raw.csv 2>&1
  ncu --import $O/$v.ncu-rep --page details > $O/$v.details.txt 2>&1
  grep -E "Duration|Registers Per|Block Limit|Achieved Occ|Theoretical Occ|Dynamic Shared|Waves" $O/$v.details.txt | tee -a $S
done
