#!/bin/bash
# Session 12, call A: CPU AMX tests on native tiles (shared K/V packing forced on, and default);
# vae-mid-512 with FV_SHARED (0 = per-thread packing as on main) and FV_ROWS, alternated by process.
D=.devbin/s12a
exec > >(tee $OUT/log.txt) 2>&1
lscpu | grep -E "Model name|L2|L3"
echo "== CPU tests, shared packing forced"; FV_SHARED=1 timeout 120 $D/flashvision_tests --gtest_brief=1 2>&1 | tail -4
echo "== CPU tests, default"; timeout 120 $D/flashvision_tests --gtest_brief=1 2>&1 | tail -4
pip install -q --no-deps --target /tmp/fv $D/*.whl 2>&1 | grep -v WARNING
n=0
for rep in 1 2 3; do
  for cfg in "0 64" "1 64" "1 128" "1 32" "1 256" "0 128"; do
    set -- $cfg; n=$((n+1))
    FV_SHARED=$1 FV_ROWS=$2 PYTHONPATH=/tmp/fv${PYTHONPATH:+:$PYTHONPATH} timeout 60 python3 -m flashvision.bench --device cpu --dtype bf16 --case vae-mid-512 --budget 0.5 --json $OUT/$n-s$1-r$2.json > /tmp/$n.txt 2>&1
    echo "shared=$1 rows=$2: $(grep -E "flashvision |torch-cpu" /tmp/$n.txt | awk '{print $1, $2, $4, $5, $9}' | paste -sd' ')"
  done
done
tar czf $OUT/json.tgz $OUT/*.json 2>/dev/null; rm -f $OUT/*.json
