#!/usr/bin/env bash
# Session 37, call 4. Kit r (main at 7ecd9a5 but for a comment) beside cuDNN and FA2 on every
# case, twice, to see how far the short cases' ratios move from run to run.
# carry: [".devbin/s37"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s37/kit-r.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-r && cp -r python/flashvision /tmp/pkg-r/ && cp /tmp/kit-r/python/_C*.so /tmp/pkg-r/flashvision/
export PYTHONUNBUFFERED=1
for n in 1 2; do
  PYTHONPATH=/tmp/pkg-r LD_LIBRARY_PATH=/tmp/kit-r timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
    --cuda-graphs --budget 0.2 --json $R/all-gpu-$n.json > $R/all-gpu-$n.txt 2>&1
  echo "== every case, kit r and peers, round $n rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu-$n.txt
done
echo "$(el) done"; save
