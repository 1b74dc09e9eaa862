#!/usr/bin/env bash
# Session 5, call 3: (a) a wide (192-row, 96-key) sm90 forward tile for bucket 80 (branch
# wip/sm90-wide80): its wide-tile tests, then the forward with the wide tile forced against the
# narrow one on the D=72/80 cases; (b) where the Python fwd+bwd time goes on the short cases
# (bench/python_call_overhead.py); (c) helper branches when their binaries are there.
set -uo pipefail
O=/tmp/o3; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call3.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
W=.devbin/wide80
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
  .whl/flashvision-*.whl > $O/pip.log 2>&1
timeout -k 5 120 $W/flashvision_gpu_tests --gtest_filter='*WideTile*:*Sm90Dispatch*' > $O/wide_tests.log 2>&1
echo "wide80 tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $O/wide_tests.log | tr '\n' ' ') ($(el))" | tee -a $S
grep -E "^\[  FAILED" $O/wide_tests.log | head -5 | tee -a $S
for r in 1 2; do for rows in 128 192; do
  FLASHVISION_SM90_FWD_ROWS=$rows timeout -k 5 60 $W/flashvision bench --device cuda --no-naive \
    --case dit-xl2-512 --case vit-h14-224 --case sd15-self-32 --shape 4,24,4096,4096,80 --shape 2,16,16384,16384,72 \
    --json $O/wide_${rows}_$r.json > $O/wide_${rows}_$r.log 2>&1
  echo "wide80 rows=$rows r$r rc=$? ($(el))" | tee -a $S
done; done
grep -h " fwd " $O/wide_*_2.log | grep flashvision | tee -a $S
PYTHONPATH=/tmp/site timeout -k 5 120 python3 bench/python_call_overhead.py sd15-self-32 sd15-self-16 sdxl-cross \
  > $O/overhead.txt 2>&1
echo "overhead rc=$? ($(el))" | tee -a $S; grep -E "^==|us   host" $O/overhead.txt | tee -a $S
PYTHONPATH=/tmp/site timeout -k 5 100 python3 .devbin/s5/layout_probe.py flux-2048 flux-1024 sweep-d128-n4096 dit-xl2-512 sdxl-self-128 > $O/layout.txt 2>&1
echo "layout probe rc=$? ($(el))" | tee -a $S; cat $O/layout.txt | grep TFLOP | tee -a $S
for x in .devbin/s5/helper-*.sh; do [ -f "$x" ] || continue
  timeout -k 5 240 bash "$x" $O >> $S 2>&1; echo "$x rc=$? ($(el))" | tee -a $S; done
