#!/bin/bash
# CPU forward, session 11: the CPU tests on the Xeon's native AMX, then main's wheel and the
# branch's wheel (queue threshold + taller blocks for big packed K/V) on the issue-4 cases,
# alternated main, branch, branch, main; torch's CPU SDPA in the same runs.
D=.devbin/final
exec > >(tee $OUT/log.txt) 2>&1
echo "== CPU tests (native AMX)"; timeout 200 $D/flashvision_tests --gtest_brief=1 2>&1 | tail -6
pip install -q --no-deps --target /tmp/fv-main $D/main/*.whl 2>&1 | grep -v WARNING
pip install -q --no-deps --target /tmp/fv-branch $D/branch/*.whl 2>&1 | grep -v WARNING
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-cross-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case dit-xl2-512 --case flux-1024 --case vae-mid-512"
n=0
for which in main branch branch main; do
  n=$((n+1))
  echo "== run $n: $which"
  PYTHONPATH=/tmp/fv-$which${PYTHONPATH:+:$PYTHONPATH} timeout 150 python3 -m flashvision.bench --device cpu --dtype bf16 $CASES --json $OUT/$n-$which.json > $OUT/$n-$which.txt 2>&1
  grep -E "flashvision |torch-cpu|geometric" $OUT/$n-$which.txt | awk '{print $1, $2, $4, $5, $9, $10}'
done
