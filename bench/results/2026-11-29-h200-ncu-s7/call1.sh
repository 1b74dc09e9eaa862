#!/usr/bin/env bash
# Session 7, call 1: Nsight Compute profiles that decide this session's kernel work: the Hopper
# forward at D=128 N=4096 (issue 5's main target), and the sm80 kernels against FA2's on the shapes
# where they trail it (forward and backward at D=256 N=4096, backward at D=64 N=4096).
set -uo pipefail
O=/tmp/s7o1; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call1.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/s7/base/flashvision
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats"
prof() { name=$1; kre=$2; shift 2
  timeout -k 5 120 ncu $SEC -k "regex:$kre" --launch-skip 2 --launch-count 1 -o $O/$name "$@" > $O/$name.run.log 2>&1
  echo "$name rc=$? ($(el))" | tee -a $S
  ncu --import $O/$name.ncu-rep --page details > $O/$name.txt 2>&1
  grep -E "^  [a-z_:<>0-9, ]+\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Eligible Warps|No Eligible|Executed Ipc A|Theoretical Occ|L1/TEX Hit|Shared Memory Conf|Block Limit" $O/$name.txt | head -24 >> $S
}
CLI="--device cuda --no-naive --repeat 4 --warmup 1 --budget 0.05"
prof sm90_fwd_d128 fwd_kernel $B bench $CLI --kernel sm90 --case sweep-d128-n4096
prof sm80_fwd_d256 fwd_kernel $B bench $CLI --kernel sm80 --case sweep-d256-n4096
prof fa2_fwd_d256 flash_fwd_kernel python3 .devbin/s7/fa2_run.py 4 8 4096 256
prof sm80_bwd_d256 bwd_kernel $B bench $CLI --kernel sm80 --backward --backward-kernel sm80 --case sweep-d256-n4096
prof fa2_bwd_d256 flash_bwd_dq_dk_dv python3 .devbin/s7/fa2_run.py 4 8 4096 256
prof sm80_bwd_d64 bwd_kernel $B bench $CLI --kernel sm80 --backward --backward-kernel sm80 --case sweep-d64-n4096
prof fa2_bwd_d64 flash_bwd_dq_dk_dv python3 .devbin/s7/fa2_run.py 4 32 4096 64
prof sm80_fwd_flux fwd_kernel $B bench $CLI --kernel sm80 --case flux-1024
prof fa2_fwd_flux flash_fwd_kernel python3 .devbin/s7/fa2_run.py 1 24 4608 128
