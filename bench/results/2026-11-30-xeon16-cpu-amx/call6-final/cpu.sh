#!/usr/bin/env bash
# Session 9, final call, CPU part: main's CPU library after the AMX merge (the CPU-only cp312 wheel
# of wip/cpu-amx at 9c1db49, whose library main now carries unchanged) against torch's CPU SDPA on
# the ten CPU image cases, in bf16 (twice) and in f32 (once), interleaved rounds.
set -u
R=$(pwd); D=$R/.devbin/s9; O=/tmp/s9cpu; mkdir -p $O
S=$OUT/cpu-summary.txt
trap 'tar czf $OUT/cpu.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_s9 $D/whl/*.whl || exit 1
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-cross-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case dit-xl2-512"
bench() {  # NAME DTYPE
  (cd /tmp && FV_COMMIT=main-s9 PYTHONPATH=/tmp/site_s9 timeout -k 5 75 python3 -u -m flashvision.bench --device cpu \
    --dtype $2 --impl flashvision --impl torch-cpu-sdpa $CASES --rounds 5 --budget 0.8 --json $O/$1.json > $O/$1.txt 2>&1)
  echo "== $1 rc=$? ($(el))" | tee -a $S
}
bench bf16-1 bf16; bench f32-1 f32; bench bf16-2 bf16
(cd /tmp && PYTHONPATH=/tmp/site_s9 python3 $D/summarize.py $O/*.json) | tee -a $S
