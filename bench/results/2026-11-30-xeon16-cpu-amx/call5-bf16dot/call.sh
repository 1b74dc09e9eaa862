#!/bin/bash
# wip/cpu-bf16dot (issue 4: bf16 dot-product GEMMs in the CPU forward, vdpbf16ps) on the device's
# 16-core Xeon, one call of about 4 minutes. Run from the repository root after copying this
# folder to .devbin/cpu-bf16dot:   bash .devbin/cpu-bf16dot/call.sh   (carry .devbin/cpu-bf16dot)
# Wheels (CPU-only, cp312): whl-base = main (base-commit.txt), whl-branch = wip/cpu-bf16dot
# (branch-commit.txt). bin/flashvision_tests: the branch's CPU gtest binary, linked statically.
#   0. what each library sees (CPU flags, kernel names for bf16 with the variable unset/0/1);
#   1. the CPU tests (all of them: with the default FLASHVISION_CPU_BF16_DOT=auto every bf16
#      forward test runs vdpbf16ps on this CPU; Bf16DotForcedIsa/avx512 checks the native
#      kernel is the one forced), then the bf16-dot tests again with the emulations forced;
#   2. the Python bench with --dtype bf16 (the path applies only to bf16 inputs; the bench's CPU
#      default is f32), 8 image cases, base / branch alternated twice, then the branch with
#      FLASHVISION_CPU_BF16_DOT=0 (its fp32 GEMMs on the same bf16 inputs) and, time left, the
#      branch on f32 inputs (unchanged path: the issue-4 figures' dtype).
# $OUT/summary.txt has the kernel names, the test summary and one line per bench run and case;
# $OUT/all.tgz every log, JSON and table.
set -u
R=$(pwd)
D=$R/.devbin/cpu-bf16dot
O=${OUT:-/tmp/cpu-bf16dot}
mkdir -p "$O/runs"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
for v in base branch; do
  rm -rf /tmp/site_bd_$v  # pip --target does not replace a package already there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_bd_$v \
    "$D"/whl-$v/flashvision-*.whl > "$O/runs/pip-$v.log" 2>&1 || { cat "$O/runs/pip-$v.log"; exit 1; }
done
md5sum /tmp/site_bd_*/flashvision/_C*.so  # two different libraries
declare -A COMMIT=([base]=$(cat "$D/base-commit.txt") [branch]=$(cat "$D/branch-commit.txt"))
chmod +x "$D"/bin/*

{
  echo "## 0. CPU and kernel names (the branch's CPU line adds 'bf16 forwards <kernel>')"
  lscpu | grep -E "^Model name|^CPU\(s\)" ; grep -o -w -E "avx512_bf16|amx_bf16|amx_tile" /proc/cpuinfo | sort | uniq -c
  for v in base branch; do
    for dot in "" 0 1; do
      echo "$v FLASHVISION_CPU_BF16_DOT='$dot': $(cd /tmp && FLASHVISION_CPU_BF16_DOT=$dot \
        PYTHONPATH=/tmp/site_bd_$v python3 -c 'import flashvision as f; print(f.describe_devices()[0])' 2>&1 | tail -1)"
    done
  done
} 2>&1 | tee "$O/runs/kernels.txt"

echo "## 1. CPU tests (branch, static binary) at $(elapsed) s"
timeout -k 5 100 "$D/bin/flashvision_tests" --gtest_brief=1 > "$O/runs/tests.txt" 2>&1
echo "tests rc=$? at $(elapsed) s" | tee -a "$O/runs/tests.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|^\[  SKIPPED \]|Failure|rc=" "$O/runs/tests.txt" | head -40
for isa in avx2 portable; do
  FLASHVISION_CPU_ISA=$isa FLASHVISION_CPU_BF16_DOT=1 timeout -k 5 40 "$D/bin/flashvision_tests" \
    --gtest_brief=1 --gtest_filter='*Bf16Dot*' > "$O/runs/tests-$isa.txt" 2>&1
  echo "bf16-dot tests, $isa forced: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$O/runs/tests-$isa.txt" | tr '\n' ' ')"
done | tee -a "$O/runs/tests.txt"

bench() {  # NAME VERSION TIMEOUT_S ARGS...
  local name=$1 v=$2 limit=$3
  shift 3
  (cd /tmp && FV_COMMIT=${COMMIT[$v]} PYTHONPATH=/tmp/site_bd_$v timeout -k 5 "$limit" python3 -u \
    -m flashvision.bench --device cpu --impl flashvision --impl torch-cpu-sdpa "$@" \
    --json "$O/runs/$name.json" > "$O/runs/$name.txt" 2>&1)
  echo "== $name rc=$? at $(elapsed) s"
}

# The weakest cases first: a run cut by its timeout keeps them.
# (BD_CASES replaces them for a dry run elsewhere.)
CASES=${BD_CASES:-"--case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case dit-xl2-512
  --case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64"}
echo "## 2. bf16 bench, 8 cases: base / branch alternated twice, then branch with BF16_DOT=0"
for r in 1 2; do
  for v in base branch; do bench "bf16-$v-$r" $v 50 $CASES --dtype bf16 --rounds 5 --budget 0.6; done
done
FLASHVISION_CPU_BF16_DOT=0 bench "bf16-branch-dot0" branch 50 $CASES --dtype bf16 --rounds 5 --budget 0.6
if [ "$(elapsed)" -lt 200 ]; then
  bench "f32-branch" branch 45 $CASES --rounds 5 --budget 0.6
else
  echo "== f32-branch skipped (time)"
fi

{
  cat "$O/runs/kernels.txt"
  echo "## tests"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|rc=" "$O/runs/tests.txt"
  echo "## bench (speedup = median over rounds of torch/flashvision in the same round; err = max"
  echo "## |out - float64 reference| on sampled rows, flashvision/torch)"
  (cd /tmp && PYTHONPATH=/tmp/site_bd_branch python3 "$D/summarize.py" "$O"/runs/*.json)
} > "$O/summary.txt" 2>&1
cat "$O/summary.txt" | tail -60
tar czf "$O/all.tgz" -C "$O" runs && rm -rf "$O/runs"
echo "done at $(elapsed) s"
