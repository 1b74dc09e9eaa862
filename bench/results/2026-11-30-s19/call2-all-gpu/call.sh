#!/usr/bin/env bash
# Session 19, device call 2: main after merging call 1's candidate (kit cand, same code) on every
# BENCH.md case against every SDPA backend and naive (CUDA graphs); then run-time choices timed
# by environment (split part counts on vae-mid-512 with a kernel-time profile, rows and splits on
# the short sweeps and flux-1024). Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
tar xJf .devbin/s19/kit-cand.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-cand && cp -r python/flashvision /tmp/pkg-cand/ && cp /tmp/kit-cand/python/_C*.so /tmp/pkg-cand/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-cand LD_LIBRARY_PATH=/tmp/kit-cand
python3 -c "import flashvision as f; print(f.__build_commit__, f.compiled_backends())"
timeout -k 5 330 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --impl sdpa-efficient --impl naive --cuda-graphs --budget 0.2 \
  --json $R/all-gpu.json > $R/all-gpu.txt 2>&1; echo "all-gpu rc=$?"; grep -v "Warning\|return F\." $R/all-gpu.txt | grep "flashvision \|geometric"
echo "$(el) GPU full run done"; save
timeout -k 5 60 python3 .devbin/s19/prof_vae.py > $R/prof-vae.txt 2>&1; echo "prof rc=$?"; cat $R/prof-vae.txt | cut -c1-400
echo "$(el) profile done"; save
env_run() {  # name, env assignment, cases...
  local name=$1 assign=$2; shift 2
  local cases=(); for c in "$@"; do cases+=(--case $c); done
  env $assign timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --cuda-graphs --budget 0.2 "${cases[@]}" \
    --json $R/env-$name.json > $R/env-$name.txt 2>&1
  echo "== $name ($assign) rc=$?: $(grep -E 'flashvision ' $R/env-$name.txt | awk '{print $1, $4, $5, $9}' | paste -sd' ')"
}
env_run vae-s3 FLASHVISION_SM90_FWD_SPLIT=3 vae-mid-512
env_run vae-s8 FLASHVISION_SM90_FWD_SPLIT=8 vae-mid-512
env_run auto-1 X=1 sweep-d64-n1024 sweep-d128-n1024 flux-1024 vit-l14-336
env_run rows128 FLASHVISION_SM90_FWD_ROWS=128 sweep-d64-n1024 vit-l14-336
env_run split1 FLASHVISION_SM90_FWD_SPLIT=1 sweep-d128-n1024 flux-1024 sweep-d64-n1024
env_run split3 FLASHVISION_SM90_FWD_SPLIT=3 sweep-d128-n1024 flux-1024
env_run auto-2 X=1 sweep-d64-n1024 sweep-d128-n1024 flux-1024 vit-l14-336
echo "$(el) env runs done"; save
echo "$(el) all done"
