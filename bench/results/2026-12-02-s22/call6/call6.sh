#!/usr/bin/env bash
# Session 22, call 6: training (forward + backward) on every case with main as landed (kit land,
# ac6a38f) beside SDPA's cuDNN and FA2 backends, 0.2 s a measurement, with --telemetry.
# carry: [".devbin/s22/kit-land.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s22/kit-land.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-land/python/_C*.so /tmp/pkg/flashvision/
export PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/kit-land PYTHONUNBUFFERED=1
mkdir -p /tmp/res6
timeout -k 5 400 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --backward --cuda-graphs --budget 0.2 --telemetry --json /tmp/res6/fwd-bwd.json > /tmp/res6/fwd-bwd.txt 2>&1
echo "== fwd+bwd rc=$?"; grep -E " flashvision |geometric" /tmp/res6/fwd-bwd.txt
tar czf "$OUT/results.tgz" -C /tmp/res6 .
