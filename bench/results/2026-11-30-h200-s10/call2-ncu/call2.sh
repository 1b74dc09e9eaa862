#!/usr/bin/env bash
# Session 10, call 2: where the sm90 forward's warps wait on short and mid image shapes
# (vit-b16-224, dit-xl2-512, flux-1024): ncu warp-state sampling per SASS instruction; the SM
# clock and power under a long forward; the bf16 matmul ceiling in the same call.
set -uo pipefail
O=/tmp/s10c2; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call2.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
mkdir -p /tmp/s10bin && tar xJf .devbin/s10/bin/cli.tar.xz -C /tmp/s10bin; B=/tmp/s10bin/flashvision
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee -a $S
CLI="--device cuda --no-naive --repeat 4 --warmup 1 --budget 0.05 --kernel sm90"
src() { name=$1; shift
  timeout -k 5 150 ncu --clock-control none --section WarpStateStats --section SourceCounters \
    --section SpeedOfLight -k regex:fwd_kernel --launch-skip 2 --launch-count 1 -o $O/$name \
    $B bench $CLI "$@" > $O/$name.run.log 2>&1
  echo "$name rc=$? ($(el))" | tee -a $S
  ncu --import $O/$name.ncu-rep --page source --print-source sass --csv > $O/$name.sass.csv 2>&1
  ncu --import $O/$name.ncu-rep --page details > $O/$name.details.txt 2>&1
  grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|Memory Throughput" $O/$name.details.txt | head -6 | tee -a $S
  python3 .devbin/s10/stalls.py $O/$name.sass.csv 30 > $O/$name.stalls.txt 2>&1
  head -18 $O/$name.stalls.txt | tee -a $S
}
src vitb16 --case vit-b16-224
src dit --case dit-xl2-512
src flux1024 --case flux-1024
# Clocks and power while the long forward runs (no profiler).
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $O/clocks.txt 2>&1 &
SMI=$!
$B bench --device cuda --no-naive --budget 3 --case flux-2048 --case sweep-d128-n4096 > $O/clock_bench.txt 2>&1
kill $SMI; sort $O/clocks.txt | uniq -c | sort -rn | head -8 | tee -a $S; grep -E "flux|sweep" $O/clock_bench.txt | tee -a $S
python3 - <<'PY' 2>&1 | tee -a $S
import torch, triton
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
ms = triton.testing.do_bench(lambda: a @ b, warmup=200, rep=2000, return_mode="median")
print(f"bf16 matmul 8192^3: {2 * 8192**3 / ms / 1e9:.1f} TFLOP/s ({ms:.3f} ms, median)")
PY
echo "done ($(el))" | tee -a $S
