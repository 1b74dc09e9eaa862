#!/bin/bash
# Session 12 call E: (1) GPU tests of the negative-scale fix and the env_decimal refactor (test
# binary built for head dims 32,48,64,80,128, sm_90a): SoftmaxScale, every *Rejected* test, the
# split and option suites, compute-sanitizer memcheck on SoftmaxScale; (2) main's CLI: the sm90
# forward's tile rows and last-wave split on the image cases (env FLASHVISION_SM90_FWD_ROWS/SPLIT).
D=.devbin/s12d
exec > >(tee $OUT/log.txt) 2>&1
echo "== GPU tests"
timeout 300 $D/flashvision_gpu_tests --gtest_filter='*SoftmaxScale*:*Rejected*:*GpuFwdSplit*:*GpuBwdTailSplit*:*GpuBwdOptions*' --gtest_brief=1 > $OUT/tests.txt 2>&1
tail -40 $OUT/tests.txt | grep -vE "^\s*$" | tail -30
echo "== the same SoftmaxScale tests on a build without the fix (must fail)"
timeout 120 $D/flashvision_gpu_tests_nofix --gtest_filter='*GpuFeatures.SoftmaxScale*' --gtest_brief=1 2>&1 | grep -E "FAILED|PASSED|max abs err" | head -8
echo "== memcheck SoftmaxScale"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $D/flashvision_gpu_tests --gtest_filter='*GpuFeatures.SoftmaxScale*' --gtest_brief=1 2>&1 | tail -4
echo "== sm90 forward rows x split (main CLI)"
CASES="--case sdxl-self-128 --case sd15-self-64 --case dit-xl2-512 --case vit-h14-224 --case vit-l14-336 --case flux-1024 --case sweep-d64-n4096"
n=0
for cfg in auto:auto 128:auto 192:auto auto:0 128:0 192:0 128:2 128:3 192:2 192:3 auto:auto; do
  n=$((n+1)); rows=${cfg%:*}; split=${cfg#*:}
  envs="FLASHVISION_SM90_FWD_SPLIT=$split"; [ $rows != auto ] && envs="$envs FLASHVISION_SM90_FWD_ROWS=$rows"
  env $envs timeout 90 $D/flashvision bench --device cuda --no-naive --budget 0.5 $CASES --json $OUT/$n.json > /tmp/$n.txt 2>&1
  echo "-- $n rows=$rows split=$split"; grep flashvision /tmp/$n.txt | grep -v "^flashvision" | awk '{print $1, $6, $7, $8}'
done
echo "== sm80 D=64 fwd+bwd (issue 3): options, then FA2 in the same call"
for cfg in default FLASHVISION_SM80_BWD_TILE=1 FLASHVISION_SM80_BWD_SDP=split FLASHVISION_SM80_BWD_SDP=groups FLASHVISION_SM80_BWD_STAGGER=2 default; do
  [ $cfg = default ] && e="" || e=$cfg
  env $e timeout 90 $D/flashvision bench --device cuda --no-naive --budget 0.8 --kernel sm80 --backward --backward-kernel sm80 --case sweep-d64-n16384 --case sweep-d64-n4096 > /tmp/b.txt 2>&1
  echo "-- $cfg"; grep flashvision /tmp/b.txt | grep -v "^flashvision" | awk '{print $1, $5, $6, $7, $8}'
done
pip install -q --no-deps --target /tmp/fv $D/*.whl 2>&1 | grep -v WARNING
PYTHONPATH=/tmp/fv${PYTHONPATH:+:$PYTHONPATH} timeout 120 python3 -m flashvision.bench --device cuda --impl sdpa-flash --impl sdpa-cudnn --backward --budget 0.8 --case sweep-d64-n16384 --case sweep-d64-n4096 --case sdxl-self-128 --case sd15-self-64 --case dit-xl2-512 --case vit-h14-224 --case vit-l14-336 --case flux-1024 --json $OUT/peers.json > /tmp/p.txt 2>&1
grep -E "sdpa" /tmp/p.txt | head -40
echo "== torch CPU bf16 matmul (oneDNN)"
timeout 120 python3 $D/cpu_mm.py
tar czf $OUT/json.tgz -C $OUT $(cd $OUT; ls *.json) && rm -f $OUT/*.json
