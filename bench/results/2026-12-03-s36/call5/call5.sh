#!/usr/bin/env bash
# Session 36, call 5. Kit w (main as landed): tail_heads.py, one call against two calls on head
# slices (the second in 128-row tiles) for SD 1.5's and SDXL's cross-attention.
# carry: [".devbin/s36"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
tar xJf .devbin/s36/kit-w.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-w && cp -r python/flashvision /tmp/pkg-w/ && cp /tmp/kit-w/python/_C*.so /tmp/pkg-w/flashvision/
PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-w LD_LIBRARY_PATH=/tmp/kit-w timeout -k 5 200 \
  python3 bench/results/2026-12-03-s36/call5/tail_heads.py
echo "rc=$?"
