#!/usr/bin/env bash
# Session 6, call 9: (a) the CPU bench of the Python package (a CPU-only wheel of this tree) on the
# ten image cases against torch's CPU SDPA and naive, 16 threads; (b) helper branches, each with
# its own script (.devbin/s6/helper-*.sh).
set -uo pipefail
O=/tmp/o9; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call9.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
for x in .devbin/s6/helper-*.sh; do [ -f "$x" ] || continue
  timeout -k 5 240 bash "$x" $O >> $S 2>&1; echo "$x rc=$? ($(el))" | tee -a $S; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_cpu .devbin/s6/whl-cpu/flashvision-*.whl > $O/pip.log 2>&1
C=0124ce5  # the tree the CPU-only wheel was built from
(cd /tmp && PYTHONPATH=/tmp/site_cpu FV_COMMIT=$C timeout -k 5 200 python3 -m flashvision.bench --device cpu \
  --case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-cross-64 --case sd15-self-32 \
  --case sd15-self-16 --case sdxl-cross --case dit-xl2-512 --case sd15-self-64 --case sdxl-self-128 \
  --budget 1.0 --json $O/bench-cpu.json --plots $O/plots-cpu > $O/bench-cpu.txt 2>&1)
echo "cpu bench rc=$? ($(el))" | tee -a $S
grep -E "flashvision|geometric" $O/bench-cpu.txt | cut -c1-160 | tee -a $S
