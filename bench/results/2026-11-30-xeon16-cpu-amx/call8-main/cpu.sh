#!/usr/bin/env bash
# Session 9, last call: main at 04d00e7 (the AMX softmax change merged; the CPU-only cp312 wheel of
# wip/cpu-amx2 at 23e5d0b, whose library main carries unchanged) against torch's CPU SDPA on
# the ten CPU image cases in bf16, three runs, interleaved rounds.
set -u
R=$(pwd); D=$R/.devbin/s9b; O=/tmp/s9bcpu; mkdir -p $O
S=$OUT/cpu-summary.txt
trap 'tar czf $OUT/cpu.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_s9b $D/whl/*.whl || exit 1
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-cross-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case dit-xl2-512"
bench() {  # NAME DTYPE
  (cd /tmp && FV_COMMIT=04d00e7 PYTHONPATH=/tmp/site_s9b timeout -k 5 75 python3 -u -m flashvision.bench --device cpu \
    --dtype $2 --impl flashvision --impl torch-cpu-sdpa $CASES --rounds 5 --budget 0.8 --json $O/$1.json > $O/$1.txt 2>&1)
  echo "== $1 rc=$? ($(el))" | tee -a $S
}
bench bf16-1 bf16; bench bf16-2 bf16; bench bf16-3 bf16
(cd /tmp && PYTHONPATH=/tmp/site_s9b python3 $D/summarize.py $O/*.json) | tee -a $S
