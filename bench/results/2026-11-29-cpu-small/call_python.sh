#!/bin/bash
# Issue 4 through the real metric: python -m flashvision.bench --device cpu (16 threads, f32),
# flashvision against torch's CPU SDPA in the same run, main's CPU code (the session-6 CPU-only
# wheel .devbin/s6/whl-cpu, built at d86e5b9: its CPU, API and Python code equal main's at
# 82bbc13 but for one comment) against wip/cpu-small (b9aa434 library, wheel .devbin/cpu-small/whl),
# alternated twice. Run from the repository root: bash .devbin/cpu-small/call_python.sh
# (carry .devbin/cpu-small and .devbin/s6). About 4-6 minutes (each run capped at 140 s). Results under $OUT.
set -u
O=${OUT:-/tmp/cpu-small-py}
mkdir -p "$O"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_main \
  .devbin/s6/whl-cpu/flashvision-*.whl > "$O/pip-main.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_branch \
  .devbin/cpu-small/whl/flashvision-*.whl > "$O/pip-branch.log" 2>&1
CASES="--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --case vit-l14-336
       --case vit-h14-224 --case sd15-cross-64 --case sdxl-cross --case dit-xl2-512
       --case sd15-self-64 --case sdxl-self-128"
for r in 1 2; do
  for v in main branch; do
    (cd /tmp && PYTHONPATH=/tmp/site_$v timeout -k 5 140 python3 -u -m flashvision.bench \
      --device cpu --impl flashvision --impl torch-cpu-sdpa $CASES --budget 1.0 \
      --json "$O/py-$v-$r.json" > "$O/py-$v-$r.txt" 2>&1)
    echo "== $v round $r rc=$?"
    grep -E "^(sd15|vit|sdxl|dit)" "$O/py-$v-$r.txt" | grep flashvision | cut -c1-150
  done
done
