#!/usr/bin/env bash
# Session 20, device call 11: Nsight Compute on one steady-state forward launch at D = 128
# (N = 1024: 16 x 16 heads; N = 16384: 1 x 16), flashvision's sm90 kernel (kit main) against
# cuDNN's (SDPA's CUDNN_ATTENTION backend): time, tensor-pipe and issue activity, instructions,
# warp stall reasons per issue. Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
D=bench/results/2026-11-30-s20/call11-ncu-d128
R=/tmp/res11; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-main && cp -r python/flashvision /tmp/pkg-main/ && cp /tmp/kit-main/python/_C*.so /tmp/pkg-main/flashvision/
export PYTHONPATH=/tmp/pkg-main LD_LIBRARY_PATH=/tmp/kit-main
M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,dram__bytes.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for shape in "16 16 1024 128" "1 16 16384 128"; do
  for impl in flashvision cudnn; do
    if [ $impl = flashvision ]; then K="regex:fwd_kernel"; else K="regex:sdpa|fmha|cudnn|fprop"; fi
    echo "== $impl $shape"
    timeout -k 5 120 ncu --kernel-name "$K" --launch-skip 3 --launch-count 1 --metrics "$M" \
      python3 $D/one_call.py $impl $shape > "$R/ncu-$impl-${shape// /x}.txt" 2>&1; echo "rc=$?"
    grep -E "^  [a-zA-Z_]|duration|gmma|issue_active|inst_executed|cycles_active|wavefronts|dram__bytes|stalled" "$R/ncu-$impl-${shape// /x}.txt" \
      | awk '/stalled/ { if ($NF+0 > 0.05) print; next } { print }' | head -40
    save
  done
done
