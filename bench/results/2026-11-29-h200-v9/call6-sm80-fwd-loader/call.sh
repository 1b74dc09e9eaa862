#!/usr/bin/env bash
# sm80-fwd-loader (branch wip/sm80-fwd-loader): the forward's GPU tests, then main's binary and the
# branch's on the benchmark cases in two interleaved rounds, then Nsight Compute's warp stall
# ratios of both at D=256 N=4096 and on flux-1024 (long scoreboard should fall towards FA2's).
set -uo pipefail
D=.devbin/sm80-fwd-loader; B=.devbin/s7/base/flashvision
O=/tmp/fvloader; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/sm80-fwd-loader.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
# The two binaries travel as carry/bins.tar.xz (with main's binary they exceed the 64 MiB carry).
python3 -c "import tarfile; tarfile.open('$D/carry/bins.tar.xz').extractall('$D')" || exit 1
F='FwdTileVariant.*:*GpuFwdTileVariants*:*GpuFeatures*sm80:*GpuSanitize*sm80:*GpuVsCpu*sm80'
timeout -k 5 240 $D/flashvision_gpu_tests --gtest_filter="$F" > $O/tests.log 2>&1
echo "tests rc=$? ($(el))" | tee -a $S
grep -E "^\[  (PASSED|FAILED)|tests? ran|FAILED " $O/tests.log | head -20 | tee -a $S
timeout -k 5 300 compute-sanitizer --tool memcheck --error-exitcode 1 $D/flashvision_gpu_tests \
  --gtest_filter='*RowPointerLoader*bf16_sm80:*GpuSanitize*sm80' > $O/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))" | tee -a $S
grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $O/memcheck.log | head -5 | tee -a $S
CASES="--case sweep-d256-n4096 --case sweep-d256-n16384 --case sweep-d256-n1024 --case flux-1024 --case sweep-d128-n4096 --case sweep-d64-n4096 --case sdxl-self-128"
for round in 1 2; do
  for v in base wip; do
    bin=$B; [ $v = wip ] && bin=$D/flashvision
    timeout -k 5 120 $bin bench --device cuda --kernel sm80 --no-naive --budget 0.3 $CASES \
      --json $O/$v-$round.json > $O/$v-$round.log 2>&1
    echo "== $v round $round rc=$? ($(el))" | tee -a $S
    grep -E "sweep|flux|sdxl" $O/$v-$round.log | tee -a $S
  done
done
M=smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_active.max,gpu__time_duration.sum
CLI="--device cuda --no-naive --repeat 4 --warmup 1 --budget 0.05 --kernel sm80"
for v in base wip; do
  bin=$B; [ $v = wip ] && bin=$D/flashvision
  for c in sweep-d256-n4096 flux-1024; do
    timeout -k 5 90 ncu --metrics $M -k regex:fwd_kernel --launch-skip 2 --launch-count 1 \
      $bin bench $CLI --case $c > $O/ncu-$v-$c.txt 2>&1
    echo "== ncu $v $c rc=$? ($(el))" | tee -a $S
    grep -E "smsp__|sm__|gpu__" $O/ncu-$v-$c.txt | tee -a $S
  done
done
echo "done ($(el))" | tee -a $S
