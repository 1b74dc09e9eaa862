#!/bin/bash
# A/B of main's and the branch's CPU wheels, alternated by process six times, on four cases.
D=.devbin/ab2
exec > >(tee $OUT/log.txt) 2>&1
pip install -q --no-deps --target /tmp/fv-main $D/main/*.whl 2>&1 | grep -v WARNING
pip install -q --no-deps --target /tmp/fv-branch $D/branch/*.whl 2>&1 | grep -v WARNING
CASES="--case sd15-self-64 --case flux-1024 --case sd15-self-16 --case vae-mid-512"
n=0
for which in main branch main branch main branch branch main; do
  n=$((n+1))
  echo "== run $n: $which"
  PYTHONPATH=/tmp/fv-$which${PYTHONPATH:+:$PYTHONPATH} timeout 60 python3 -m flashvision.bench --device cpu --dtype bf16 $CASES --budget 0.3 --json $OUT/$n-$which.json > /tmp/$n.txt 2>&1
  grep -E "flashvision |torch-cpu" /tmp/$n.txt | awk '{print $1, $2, $4, $5, $9}' | paste -sd' '
done
