#!/usr/bin/env bash
# Session 30, call 1: (a) the text width's Q buffers and O epilogue, main against kit x1 (four Q
# buffers) and x2 (four Q buffers and O staged through shared memory) on SD 1.5's and SDXL's
# cross-attention, alternated processes; (b) main's last-wave split forced off and on for the
# short self-attention cases; (c) Nsight Compute on one steady-state forward of SD 1.5 and SDXL
# cross-attention, SD 1.5 16 x 16 and ViT-L/14, ours (main) against cuDNN.
# carry: [".devbin/s30"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-main kit-x1 kit-x2; do
  tar xJf .devbin/s30/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
D=bench/results/2026-12-02-s30/call1
i=0
for K in kit-main kit-x1 kit-x2 kit-x2 kit-x1 kit-main; do
  i=$((i+1)); use $K
  timeout -k 5 60 python3 -m flashvision.bench --impl flashvision --case sd15-cross-64 --case sdxl-cross \
    --cuda-graphs --budget 0.3 --json $R/ab-$i-$K.json > $R/ab-$i-$K.txt 2>&1
  echo "== A/B round $i $K rc=$? $(el)"; grep -E "^(sd15|sdxl)" $R/ab-$i-$K.txt
done
save
use kit-main
SHORT="--case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --case flux-1024 --case vit-l14-336"
for s in 0 2 auto 4; do
  FLASHVISION_SM90_FWD_SPLIT=$s timeout -k 5 60 python3 -m flashvision.bench --impl flashvision $SHORT \
    --cuda-graphs --budget 0.3 --json $R/split-$s.json > $R/split-$s.txt 2>&1
  echo "== split $s rc=$? $(el)"; grep -E "^(sd15|sdxl|flux|vit)" $R/split-$s.txt
done
for r in 128 192; do
  FLASHVISION_SM90_FWD_ROWS=$r timeout -k 5 60 python3 -m flashvision.bench --impl flashvision --case vit-l14-336 \
    --cuda-graphs --budget 0.3 > $R/rows-$r.txt 2>&1
  echo "== rows $r $(el)"; grep -E "^vit" $R/rows-$r.txt
done
save
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__warps_eligible.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active,launch__grid_size,launch__registers_per_thread,launch__block_size,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for shape in "2 8 4096 77 40" "2 10 4096 77 64" "2 8 256 256 160" "64 16 577 577 64"; do
  for impl in flashvision cudnn; do
    if [ $impl = flashvision ]; then KN="regex:fwd_kernel"; else KN="regex:sdpa|fmha|cudnn|fprop|cutlass|sm90"; fi
    f="$R/ncu-$impl-${shape// /x}.txt"
    timeout -k 5 60 ncu --kernel-name "$KN" --launch-skip 3 --launch-count 1 --metrics "$M" \
      python3 $D/one_call.py $impl $shape > "$f" 2>&1; echo "== ncu $impl $shape rc=$? $(el)"
    grep -E "fwd|sdpa|fmha|cudnn|duration|dram__|lts__|gmma|issue_active|inst_executed|cycles_|eligible|warps_active|grid_size|registers|block_size|stalled" "$f" \
      | awk '/stalled/ { if ($NF+0 > 0.1) print; next } { print }' | head -40
    save
  done
done
echo "$(el) done"; save
