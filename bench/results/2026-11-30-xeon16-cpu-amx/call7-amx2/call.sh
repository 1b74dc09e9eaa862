#!/bin/bash
# wip/cpu-amx2 (issue 4: the AMX-BF16 forward's softmax, for SD 1.5 32x32 and 16x16) on the
# device's 16-core Xeon, one call of about 2.5 minutes. Run from the repository root after copying
# this folder to .devbin/cpu-amx2:
#   bash .devbin/cpu-amx2/call.sh   (carry .devbin/cpu-amx2)
# Wheels (CPU-only, cp312): whl-base = main (base-commit.txt), whl-branch = wip/cpu-amx2
# (branch-commit.txt). bin/flashvision_tests: the branch's CPU gtest binary, fully static.
#   0. the kernel each library names for bf16 inputs (both must say cpu-amx);
#   1. the AMX and bf16 forward test suites on the real tiles (FLASHVISION_CPU_AMX unset = auto:
#      every bf16 forward test runs the tiles here; CpuAmx.NativeTiles must run, not skip);
#   2. the Python bench in bf16, 5 image cases, base / branch / base / branch.
# $OUT/summary.txt: kernel names, test summary, one line per bench run and case; $OUT/all.tgz: every
# log, JSON and table.
set -u
R=$(pwd)
D=$R/.devbin/cpu-amx2
O=${OUT:-/tmp/cpu-amx2}
mkdir -p "$O/runs"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
for v in base branch; do
  rm -rf /tmp/site_amx2_$v  # pip --target does not replace a package already there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_amx2_$v \
    "$D"/whl-$v/flashvision-*.whl > "$O/runs/pip-$v.log" 2>&1 || { cat "$O/runs/pip-$v.log"; exit 1; }
done
md5sum /tmp/site_amx2_*/flashvision/_C*.so  # two different libraries
declare -A COMMIT=([base]=$(cat "$D/base-commit.txt") [branch]=$(cat "$D/branch-commit.txt"))
chmod +x "$D"/bin/*

NAMES='import torch, flashvision as f
q = torch.randn(2, 4, 100, 64, dtype=torch.bfloat16)
print(f.selected_kernel(q, q, q, layout="bhsd"))'
{
  echo "## 0. CPU and kernel names (bf16 inputs)"
  lscpu | grep -E "^Model name|^CPU\(s\)|^Thread"
  for v in base branch; do
    echo "$v: $(cd /tmp && PYTHONPATH=/tmp/site_amx2_$v python3 -c "$NAMES" 2>&1 | tail -1)"
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
timeout -k 5 30 "$D/bin/flashvision_tests" --gtest_filter='CpuAmx.NativeTiles:CpuAmx.Negative*' 2>&1 \
  | grep -E "OK|SKIPPED|FAILED" | tee -a "$O/runs/tests.txt"

bench() {  # NAME VERSION TIMEOUT_S ARGS...
  local name=$1 v=$2 limit=$3
  shift 3
  (cd /tmp && FV_COMMIT=${COMMIT[$v]} PYTHONPATH=/tmp/site_amx2_$v timeout -k 5 "$limit" python3 -u \
    -m flashvision.bench --device cpu --dtype bf16 --impl flashvision --impl torch-cpu-sdpa "$@" \
    --json "$O/runs/$name.json" > "$O/runs/$name.txt" 2>&1)
  echo "== $name rc=$? at $(elapsed) s"
}

CASES="--case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --case sd15-self-64
  --case vit-b16-224"
echo "## 2. bf16 bench, 5 cases: base / branch alternated twice"
for r in 1 2; do
  for v in base branch; do bench "bf16-$v-$r" $v 40 $CASES --rounds 5 --budget 0.8; done
done

{
  cat "$O/runs/kernels.txt"
  echo "## tests"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|^\[  SKIPPED \]|rc=|NativeTiles|Negative" \
    "$O/runs/tests.txt"
  echo "## bench (speedup = median over rounds of torch/flashvision in the same round; err = max"
  echo "## |out - float64 reference| on sampled rows, flashvision/torch)"
  (cd /tmp && PYTHONPATH=/tmp/site_amx2_branch python3 "$D/summarize.py" "$O"/runs/*.json)
} > "$O/summary.txt" 2>&1
tail -40 "$O/summary.txt"
tar czf "$O/all.tgz" -C "$O" runs && rm -rf "$O/runs"
echo "done at $(elapsed) s"
