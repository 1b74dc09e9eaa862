#!/bin/bash
# wip/cpu-pv (issue 4: the forward's per-thread GEMM rate at D = 160/80/64/72) on the device's
# 16-core Xeon, one call of about 3 minutes. Run from the repository root after copying this folder
# to .devbin/cpu-pv:   bash .devbin/cpu-pv/call.sh   (carry .devbin/cpu-pv)
# Wheels (CPU-only, cp312): whl-base = wip/cpu-fast16's library (built at d84f5da; the branch tip
# a4417fd changed only bench/results and docs), whl-branch = wip/cpu-pv (branch-commit.txt).
#   0. one thread, C++ (bin/): the FMA ceiling from registers and the two GEMMs alone, old
#      (base) and new (branch) kernel in turn, at the forward's task shapes (gemm_ab512); the phases
#      of one sd15-self-16 head (48x128 = base tiling, 48x64 = branch tiling) and one sd15-self-32
#      head (96x128), base library then branch library (phases-base, phases-branch);
#   1. the Python bench, 4 cases, base / branch alternated twice (--budget 1, 5 rounds);
#   2. sd15-self-16 with the branch wheel: its 48x64 tiling against FLASHVISION_CPU_FWD_BLOCKS=48,128
#      (the base tiling with the branch's kernel), alternated twice (--rounds 10 --budget 2).
# $OUT/summary.txt has one line per bench run and case; $OUT/all.tgz every JSON and table.
set -u
R=$(pwd)
D=$R/.devbin/cpu-pv
O=${OUT:-/tmp/cpu-pv}
mkdir -p "$O/runs"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
for v in base branch; do
  rm -rf /tmp/site_pv_$v  # pip --target does not replace a package already there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_pv_$v \
    "$D"/whl-$v/flashvision-*.whl > "$O/runs/pip-$v.log" 2>&1 || { cat "$O/runs/pip-$v.log"; exit 1; }
done
md5sum /tmp/site_pv_*/flashvision/_C*.so  # two different libraries
declare -A COMMIT=([base]=a4417fd [branch]=$(cat "$D/branch-commit.txt"))
chmod +x "$D"/bin/*

echo "## 0. one thread: FMA ceiling, GEMMs alone (old = base kernel, new = branch kernel; GF/s)"
timeout -k 5 60 "$D/bin/gemm_ab512" --peak --rounds 300 256,160,48,128 256,160,48,64 \
  256,160,64,128 256,160,48,128,4 --rounds 100 1024,80,96,128 1024,72,384,128 4096,64,384,128 \
  --peak 2>&1 | tee "$O/runs/gemm_ab.txt"
echo "## 0b. phases of one head, one thread (us; 'in place' is the library's forward)"
for v in base branch; do
  echo "== $v"
  timeout -k 5 40 "$D/bin/phases-$v" --rounds 60 256,160,48,128 256,160,48,64 \
    1024,80,96,128 2>&1 | tee "$O/runs/phases-$v.txt"
done

bench() {  # NAME VERSION TIMEOUT_S ARGS...
  local name=$1 v=$2 limit=$3
  shift 3
  (cd /tmp && FV_COMMIT=${COMMIT[$v]} PYTHONPATH=/tmp/site_pv_$v timeout -k 5 "$limit" python3 -u \
    -m flashvision.bench --device cpu --impl flashvision --impl torch-cpu-sdpa "$@" \
    --json "$O/runs/$name.json" > "$O/runs/$name.txt" 2>&1)
  echo "== $name rc=$? at $(elapsed) s"
  grep -E "^(sd15|vit|sdxl|dit)" "$O/runs/$name.txt" | grep flashvision | cut -c1-18,44-64,84-140
}

echo "## 1. four cases, base / branch alternated twice"
CASES="--case sd15-self-16 --case sd15-self-32 --case sdxl-self-128 --case dit-xl2-512"
for r in 1 2; do
  for v in base branch; do bench "four-$v-$r" $v 60 $CASES --budget 1; done
done

echo "## 2. sd15-self-16, branch library: its 48x64 blocks / the base's 48x128"
for r in 1 2; do
  if [ "$(elapsed)" -gt 190 ]; then echo "== step 2 round $r skipped (time)"; continue; fi
  bench "s16-bk64-$r" branch 40 --case sd15-self-16 --rounds 10 --budget 2
  FLASHVISION_CPU_FWD_BLOCKS=48,128 bench "s16-bk128-$r" branch 40 --case sd15-self-16 --rounds 10 --budget 2
done

echo "## summary (speedup = median over rounds of torch/flashvision in the same round)"
(cd /tmp && PYTHONPATH=/tmp/site_pv_branch python3 "$D/summarize.py" "$O"/runs/*.json) \
  | tee "$O/summary.txt"
tar czf "$O/all.tgz" -C "$O" runs && rm -rf "$O/runs"
echo "done at $(elapsed) s"
