#!/usr/bin/env bash
# Session 26, call 1: kit cs (wip/sm90-cluster-split at 79343a1, on wip/sm90-mc-wide80: D = 80's
# 192 x 96 wide tile gets a K/V-sharing cluster kernel; tiles split over their keys by the two CTAs
# of a cluster). The multicast and cluster-split tests under a timeout, then the full GPU gtests;
# an A/B of the D = 72/80 and bucket-48 cases in three modes (auto = wide + multicast, ROWS=128 =
# session 25's default for DiT, MULTICAST=0), alternated twice; SD 1.5 16 x 16 with the cluster
# split off / auto and with the combine kernel's split of two parts; the cluster split forced on
# larger grids; every case beside every peer at the defaults; the kernels each short case launches
# and their device time (torch.profiler) beside cuDNN's; Nsight Compute on the short cases.
# carry: [".devbin/s26"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-cs
tar xJf .devbin/s26/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
NEW='*KvMulticast*:*ClusterSplit*'
timeout -k 5 200 $T --gtest_filter="$NEW" > $R/gtests-new.txt 2>&1; rc=$?
echo "== new tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-new.txt | head -20
if [ $rc -ne 0 ]; then
  tail -30 $R/gtests-new.txt
  timeout -k 5 100 compute-sanitizer --tool memcheck $T --gtest_filter='*ClusterSplit.OddKeyBlockCount/bf16' > $R/memcheck-fail.txt 2>&1
  echo "== memcheck after failure rc=$?"; grep -E "ERROR SUMMARY|Invalid|rror" $R/memcheck-fail.txt | head -20
  save; exit 1
fi
save
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T --gtest_filter="-$NEW" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests.txt.gz
echo "== GPU gtests (without the new suites) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
for tool in memcheck synccheck; do
  timeout -k 5 120 compute-sanitizer --tool $tool --error-exitcode 9 $T \
    --gtest_filter='*ClusterSplit.OddKeyBlockCount/bf16:*ClusterSplit.CausalPartsWithoutKeys/f16' > $R/$tool-cs.txt 2>&1
  echo "== $tool rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/$tool-cs.txt
done
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
CASES="--case dit-xl2-512 --case vit-h14-224 --case sd15-self-32 --case sd15-self-64 --case sweep-d64-n4096"
for rep in 1 2; do
  for mode in auto rows128 mc0; do
    case $mode in
      auto) env=(X=1) ;; rows128) env=(FLASHVISION_SM90_FWD_ROWS=128) ;; mc0) env=(FLASHVISION_SM90_FWD_MULTICAST=0) ;;
    esac
    env "${env[@]}" timeout -k 5 60 $B $CASES --json $R/ab-$rep-$mode.json > $R/ab-$rep-$mode.txt 2>&1; echo "== ab $rep $mode rc=$?"
    grep -E "^(dit|vit|sd15|sweep)" $R/ab-$rep-$mode.txt
  done
done
echo "$(el) ab done"; save
for m in 0 auto 0 auto; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=$m timeout -k 5 30 $B --case sd15-self-16 --json $R/cs16-$m-$RANDOM.json >> $R/cs16.txt 2>&1; echo "== cs $m rc=$?"
done
for sp in 2 2; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=0 FLASHVISION_SM90_FWD_SPLIT=$sp timeout -k 5 30 $B --case sd15-self-16 >> $R/cs16.txt 2>&1; echo "== combine split $sp rc=$?"
done
grep -E "^sd15" $R/cs16.txt
for m in 0 1 0 1; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=$m timeout -k 5 40 $B --case sd15-self-32 --case sweep-d128-n1024 --case dit-xl2-512 >> $R/cs-forced.txt 2>&1; echo "== cs forced $m rc=$?"
done
grep -E "^(sd15|sweep|dit)" $R/cs-forced.txt
echo "$(el) cluster split done"; save
timeout -k 5 240 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 --telemetry --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== all rc=$?"; grep "flashvision vs best" $R/all-gpu.txt; grep -E "^[a-z].*flashvision  " $R/all-gpu.txt | head -30
echo "$(el) all done"; save
timeout -k 5 120 python3 .devbin/s26/kernels.py > $R/kernels.txt 2>&1; echo "== kernels rc=$?"; cat $R/kernels.txt
FLASHVISION_SM90_FWD_CLUSTER_SPLIT=0 timeout -k 5 60 python3 .devbin/s26/kernels.py sd15-self-16 >> $R/kernels.txt 2>&1; echo "== kernels cs0 rc=$?"; tail -8 $R/kernels.txt
echo "$(el) kernels done"; save
for c in sd15-self-16 sd15-cross-64 vit-l14-336; do
  for impl in flashvision cudnn; do
    timeout -k 5 90 ncu --launch-skip 3 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy \
      --section WarpStateStats --section SchedulerStats python3 .devbin/s26/one_case.py $c $impl 4 > $R/ncu-$c-$impl.txt 2>&1
    echo "== ncu $c $impl rc=$?"; grep -E "^  [a-zA-Z_].*\(|Duration|Registers Per|Grid Size|Block Size|Achieved Occ|Warp Cycles Per Issued|No Eligible|Issued Warp Per|Compute \(SM\) Th|Memory Throughput" $R/ncu-$c-$impl.txt | head -16
  done
done
echo "$(el) done"; save
