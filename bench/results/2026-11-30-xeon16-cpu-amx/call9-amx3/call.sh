#!/bin/bash
# wip/cpu-amx3 (the AMX-BF16 forward at SD 1.5 16x16: gather-free K^T packing, one key block for
# key sequences of up to 256 keys) on the device's 16-core Xeon, one call of about 2.5 minutes.
# Run from the repository root after copying this folder to .devbin/cpu-amx3:
#   bash .devbin/cpu-amx3/call.sh   (carry .devbin/cpu-amx3)
# Wheels (CPU-only, cp312): whl-base = main (base-commit.txt), whl-branch = wip/cpu-amx3
# (branch-commit.txt). bin/: the branch's CPU gtest binary and the C++ CLI of base and branch, all
# fully static.
#   0. the kernel each library names for bf16 inputs (both must say cpu-amx);
#   1. the AMX and bf16 forward test suites on the real tiles (CpuAmx.NativeTiles must run);
#   2. the C++ CLI without Python or torch: sd15-self-16 and vit-b16-224 at 16 threads, base /
#      branch / branch with FLASHVISION_CPU_AMX_WHOLE_KEYS=0 (the old 128-key blocks), and
#      sd15-self-16 at 1 thread (the per-thread work without the parallel region);
#   3. the Python bench in bf16, 4 cases, base / branch / base / branch.
# $OUT/summary.txt: everything to read; $OUT/all.tgz: every log, JSON and table.
set -u
R=$(pwd)
D=$R/.devbin/cpu-amx3
O=${OUT:-/tmp/cpu-amx3}
mkdir -p "$O/runs"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
for v in base branch; do
  rm -rf /tmp/site_amx3_$v  # pip --target does not replace a package already there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_amx3_$v \
    "$D"/whl-$v/flashvision-*.whl > "$O/runs/pip-$v.log" 2>&1 || { cat "$O/runs/pip-$v.log"; exit 1; }
done
md5sum /tmp/site_amx3_*/flashvision/_C*.so  # two different libraries
declare -A COMMIT=([base]=$(cat "$D/base-commit.txt") [branch]=$(cat "$D/branch-commit.txt"))
chmod +x "$D"/bin/*

NAMES='import torch, flashvision as f
q = torch.randn(2, 4, 100, 64, dtype=torch.bfloat16)
print(f.selected_kernel(q, q, q, layout="bhsd"))'
{
  echo "## 0. CPU and kernel names (bf16 inputs)"
  lscpu | grep -E "^Model name|^CPU\(s\)|^Thread"
  for v in base branch; do
    echo "$v: $(cd /tmp && PYTHONPATH=/tmp/site_amx3_$v python3 -c "$NAMES" 2>&1 | tail -1)"
  done
} 2>&1 | tee "$O/runs/kernels.txt"

echo "## 1. AMX and bf16 forward tests (branch, static binary) at $(elapsed) s"
FILTER='CpuAmx.*:All/Numerics.*:*ForwardSweep*:CpuForward*'
timeout -k 5 70 "$D/bin/flashvision_tests" --gtest_brief=1 --gtest_filter="$FILTER" \
  > "$O/runs/tests.txt" 2>&1
echo "tests rc=$? at $(elapsed) s" | tee -a "$O/runs/tests.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|^\[  SKIPPED \]|Failure|Skipped|rc=" \
  "$O/runs/tests.txt" | head -40
# The real tiles, not the emulation: CpuAmx.NativeTiles must have run.
timeout -k 5 30 "$D/bin/flashvision_tests" \
  --gtest_filter='CpuAmx.NativeTiles:CpuAmx.ShortKeys*:CpuAmx.Negative*' 2>&1 \
  | grep -E "OK|SKIPPED|FAILED" | tee -a "$O/runs/tests.txt"

cli() {  # NAME BINARY WHOLE_KEYS ARGS...
  local name=$1 bin=$2 whole=$3
  shift 3
  FLASHVISION_CPU_AMX_WHOLE_KEYS=$whole timeout -k 5 30 "$D/bin/$bin" bench --device cpu \
    --dtype bf16 --no-naive "$@" > "$O/runs/cli-$name.txt" 2>&1
  echo "cli-$name rc=$? $(grep -E '^(sd15|vit|custom)' "$O/runs/cli-$name.txt" | tr -s ' ' \
    | paste -sd '|')"
}
echo "## 2. C++ CLI (no Python, no torch) at $(elapsed) s"
{
  for r in 1 2; do
    cli "base-16t-$r" flashvision-base 1 --case sd15-self-16 --case vit-b16-224 --budget 0.5
    cli "branch-16t-$r" flashvision-branch 1 --case sd15-self-16 --case vit-b16-224 --budget 0.5
    cli "branch-blocks128-16t-$r" flashvision-branch 0 --case sd15-self-16 --case vit-b16-224 \
      --budget 0.5
  done
  cli base-1t flashvision-base 1 --case sd15-self-16 --threads 1 --budget 0.5
  cli branch-1t flashvision-branch 1 --case sd15-self-16 --threads 1 --budget 0.5
  cli branch-blocks128-1t flashvision-branch 0 --case sd15-self-16 --threads 1 --budget 0.5
} 2>&1 | tee "$O/runs/cli.txt"

bench() {  # NAME VERSION TIMEOUT_S ARGS...
  local name=$1 v=$2 limit=$3
  shift 3
  (cd /tmp && FV_COMMIT=${COMMIT[$v]} PYTHONPATH=/tmp/site_amx3_$v timeout -k 5 "$limit" python3 -u \
    -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa "$@" \
    --json "$O/runs/$name.json" > "$O/runs/$name.txt" 2>&1)
  echo "== $name rc=$? at $(elapsed) s"
}

CASES="--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --case sdxl-cross"
echo "## 3. bf16 bench, 4 cases: base / branch alternated twice at $(elapsed) s"
for r in 1 2; do
  for v in base branch; do bench "bf16-$v-$r" $v 35 $CASES --rounds 7 --budget 0.8; done
done

{
  cat "$O/runs/kernels.txt"
  echo "## tests"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|^\[  SKIPPED \]|rc=|NativeTiles|ShortKeys|Negative" \
    "$O/runs/tests.txt"
  echo "## C++ CLI (time = median ms of the calls; blocks128 = FLASHVISION_CPU_AMX_WHOLE_KEYS=0)"
  cat "$O/runs/cli.txt"
  echo "## bench (speedup = median over rounds of torch/flashvision in the same round; err = max"
  echo "## |out - float64 reference| on sampled rows, flashvision/torch)"
  (cd /tmp && PYTHONPATH=/tmp/site_amx3_branch python3 "$D/summarize.py" "$O"/runs/*.json)
} > "$O/summary.txt" 2>&1
tail -45 "$O/summary.txt"
tar czf "$O/all.tgz" -C "$O" runs && rm -rf "$O/runs"
echo "done at $(elapsed) s"
