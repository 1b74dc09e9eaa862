#!/usr/bin/env bash
# Session 17's third call: Nsight Compute on the Hopper forward and cuDNN's where cuDNN leads
# (D = 256 N = 1024, SDXL cross-attention), for the next session's issue-5 work.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s17/kit2.tar.xz -C / || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-full/python/_C*.so /tmp/pkg/flashvision/ || exit 1
sed -i "s/= _C.__build_commit__/= getattr(_C, \"__build_commit__\", \"unknown\")/" /tmp/pkg/flashvision/__init__.py  # the kit predates it
export PYTHONPATH=/tmp/pkg PYTHONUNBUFFERED=1
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
prof() {  # NAME SHAPE... IMPL
  local name=$1; shift
  timeout -k 5 50 ncu --kernel-name regex:"fwd_kernel|fprop" --launch-skip 3 --launch-count 1 $sections \
    python3 .devbin/s17/one_call.py "$@" > "$OUT/ncu-$name.txt" 2>&1
  echo "$name rc=$? $(grep -E ' Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Grid Size|Block Size|Dynamic Shared' "$OUT/ncu-$name.txt" | tr -s ' ' | tr '\n' ';')"
}
prof d256-fv 16 8 1024 1024 256 fv
#prof d256-cudnn 16 8 1024 1024 256 cudnn
prof sdxlx-fv 2 10 4096 77 64 fv
#prof sdxlx-cudnn 2 10 4096 77 64 cudnn
