#!/usr/bin/env bash
# Session 26, call 3: kit cs3 (wip/sm90-cluster-split with the relaxed last cluster barrier). The
# cluster-split tests, then SD 1.5 16 x 16 with the cluster split off and auto, alternated three
# times, and its kernels' device time (torch.profiler) both ways.
# carry: [".devbin/s26"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
K=kit-cs3
tar xJf .devbin/s26/$K.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/$K/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/$K
T=/tmp/$K/bin/flashvision_gpu_tests
timeout -k 5 120 $T --gtest_filter='*ClusterSplit*' > $R/gtests-cs.txt 2>&1; rc=$?
echo "== cluster split tests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-cs.txt | head -20
[ $rc -ne 0 ] && { save; exit 1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2"
for m in 0 auto 0 auto 0 auto; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=$m timeout -k 5 30 $B --case sd15-self-16 >> $R/cs16.txt 2>&1; echo "== cs $m rc=$?"
done
grep -E "^sd15" $R/cs16.txt
for m in 0 auto; do
  FLASHVISION_SM90_FWD_CLUSTER_SPLIT=$m timeout -k 5 60 python3 .devbin/s26/kernels.py sd15-self-16 >> $R/kernels.txt 2>&1; echo "== kernels $m rc=$?"
done
grep -E "device|fwd_kernel" $R/kernels.txt
echo "$(el) done"; save
