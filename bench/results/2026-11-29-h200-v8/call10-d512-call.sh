#!/usr/bin/env bash
# One device call from the repo root of /work/main, with this folder copied to .devbin/sm80-bwd-d512:
# the new bucket-512 tests, memcheck/racecheck on two small ones, a D = 64 smoke of the sm80
# backward (the build has buckets 64 and 512 only), then vae-mid-512 fwd+bwd (two rounds, and once
# with the naive path for comparison). Results and summary.txt in $OUT.
set -uo pipefail
B=${B:-.devbin/sm80-bwd-d512}
OUT=${OUT:-/tmp/sm80-bwd-d512-out}; mkdir -p "$OUT"; S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$S"
t0=$(date +%s)
run_tests() {  # name filter [prefix...]
  local name=$1 filter=$2; shift 2
  timeout 300 "$@" $B/flashvision_gpu_tests --gtest_filter="$filter" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? passed $(grep -h '^\[  PASSED  \]' "$OUT/$name.log" | awk '{print $4}')" \
       "skipped $(grep -h '^\[  SKIPPED \] [0-9]' "$OUT/$name.log" | awk '{print $4}')" \
       "failed $(grep -h '^\[  FAILED  \] [0-9]' "$OUT/$name.log" | awk '{print $4}') ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
  grep -h '^\[  FAILED  \] [A-Z]' "$OUT/$name.log" | head -20 | tee -a "$S"
  grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$OUT/$name.log" | tail -2 | tee -a "$S"
}
run_tests new '*HeadDim512*:BwdWarpGrid.*:BwdTileVariant.*'
run_tests smoke64 'Cuda/GpuFeatures.GroupedQueryAttention/*:Cuda/GpuFeatures.CausalAlignment/*:Cuda/GpuFeatures.VarlenQueriesWithoutKeys/*:Cuda/GpuFeatures.AutomaticBackendPicksCuda/*:GpuDeterministic.*:Cuda/GpuSanitize.DenseCausalGqa/*:GpuSm90Dispatch.AutomaticForwardOfHeadDim512'
run_tests memcheck 'Cuda/GpuBwdHeadDim512.DenseBothLayoutsPartialBlocks/bf16:Cuda/GpuBwdHeadDim512.SmallGridSplitsTheQueryBlocks/bf16' \
  compute-sanitizer --tool memcheck
run_tests racecheck 'Cuda/GpuBwdHeadDim512.HeadDimsPaddedIntoTheBucket/bf16' \
  compute-sanitizer --tool racecheck
for round in 1 2; do
  timeout 120 $B/flashvision bench --device cuda --backward --no-naive --budget 0.3 \
    --case vae-mid-512 --json "$OUT/vae_$round.json" > "$OUT/vae_$round.log" 2>&1
  echo "bench round $round rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
done
timeout 120 $B/flashvision bench --device cuda --backward --budget 0.3 --case vae-mid-512 \
  --json "$OUT/vae_naive.json" > "$OUT/vae_naive.log" 2>&1
echo "bench with naive rc=$? ($(( $(date +%s)-t0 ))s)" | tee -a "$S"
python3 - "$OUT" <<'PY' | tee -a "$S"
import json, sys, glob, os
for path in sorted(glob.glob(os.path.join(sys.argv[1], "vae_*.json"))):
    for r in json.load(open(path))["records"]:
        errs = " ".join(f"{k}={r[k]:.2e}" for k in ("max_err", "max_err_dq", "max_err_dk", "max_err_dv")
                        if r.get(k) is not None)
        print(os.path.basename(path), r.get("impl"), r.get("kernel"), r["pass"], r.get("ms"),
              r.get("tflops"), errs, r.get("error", ""))
PY
echo "done $(( $(date +%s)-t0 ))s" | tee -a "$S"
