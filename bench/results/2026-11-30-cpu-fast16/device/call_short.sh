#!/bin/bash
# wip/cpu-fast16 (issue 4: sd15-self-16 >= 1.5x torch's CPU SDPA) on the device's 16-core Xeon, one
# call of about 6-9 minutes. Run from the repository root after copying this folder to
# .devbin/cpu-fast16:   bash .devbin/cpu-fast16/call.sh   (carry .devbin/cpu-fast16)
# Wheels (CPU-only, cp312): whl-main = main at 2deeb09, whl-branch = wip/cpu-fast16. main's library
# is timed by the branch's bench (its flashvision/bench copied over main's), so both sides are timed
# alike: interleaved rounds (--rounds), speedup = median of the rounds' ratios.
#   0. the branch's library from C++ (bin/: cpu_fwd_phases, cpu_fwd_time of
#      bench/results/2026-11-29-cpu-small, linked statically at d84f5da): phases of one
#      sd15-self-16 head at one thread, whole calls at 16 and 1 threads;
#   1. fixed cost per call at 16 threads (cpu_overhead.py), main then branch;
#   2. sd15-self-16, main / branch alternated 3x (--rounds 10, --budget 2);
#   3. sd15-self-16 with the branch: --rounds 1 (the old block timing) / --rounds 5 alternated 3x:
#      the spread of the reported ratio under each timing;
#   4. the ten image cases, main / branch (then again while time is left), --budget 1.
# Everything lands in $OUT/all.tgz; $OUT/summary.txt and the printed tail hold the figures.
set -u
R=$(pwd)
D=$R/.devbin/cpu-fast16
O=${OUT:-/tmp/cpu-fast16}
mkdir -p "$O/runs"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
for v in main branch; do
  rm -rf /tmp/site_fast16_$v  # pip --target does not replace a package already there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_fast16_$v \
    "$D"/whl-$v/flashvision-*.whl > "$O/runs/pip-$v.log" 2>&1 || { cat "$O/runs/pip-$v.log"; exit 1; }
done
rm -rf /tmp/site_fast16_main/flashvision/bench
cp -r /tmp/site_fast16_branch/flashvision/bench /tmp/site_fast16_main/flashvision/bench
md5sum /tmp/site_fast16_*/flashvision/_C*.so  # two different libraries
grep -c round_ms /tmp/site_fast16_main/flashvision/bench/runner.py  # the branch's bench: > 0
declare -A COMMIT=([main]=2deeb09 [branch]=$(cat "$D/branch-commit.txt"))
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
nproc

bench() {  # NAME VERSION TIMEOUT_S ARGS...
  local name=$1 v=$2 limit=$3
  shift 3
  (cd /tmp && FV_COMMIT=${COMMIT[$v]} PYTHONPATH=/tmp/site_fast16_$v timeout -k 5 "$limit" python3 -u \
    -m flashvision.bench --device cpu --impl flashvision --impl torch-cpu-sdpa "$@" \
    --json "$O/runs/$name.json" > "$O/runs/$name.txt" 2>&1)
  echo "== $name rc=$? at $(elapsed) s"
  grep -E "^(sd15|vit|sdxl|dit)" "$O/runs/$name.txt" | grep flashvision | cut -c1-18,44-64,84-140
}

echo "## 2. sd15-self-16, main / branch, 10 rounds of 0.2 s per impl"
for r in 1 2; do
  for v in main branch; do bench "s16-$v-$r" $v 60 --case sd15-self-16 --rounds 10 --budget 2; done
done

echo "## 3. sd15-self-16, branch, block timing (--rounds 1) / rounds (--rounds 5)"
for r in 1 2; do
  for n in 1 5; do bench "s16-rounds$n-$r" branch 40 --case sd15-self-16 --rounds $n --budget 1; done
done

echo "## 4. ten image cases, main / branch"
CASES="--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --case vit-l14-336
       --case vit-h14-224 --case sd15-cross-64 --case sdxl-cross --case dit-xl2-512
       --case sd15-self-64 --case sdxl-self-128"
for r in 1; do
  for v in main branch; do
    if [ $(( $(elapsed) + 130 )) -gt ${CPU_LIMIT_S:-560} ]; then echo "== all-$v-$r skipped (time)"; continue; fi
    bench "all-$v-$r" $v 150 $CASES --budget 1
  done
done

echo "## summary (speedup = median over rounds of torch/flashvision in the same round)"
(cd /tmp && PYTHONPATH=/tmp/site_fast16_branch python3 "$D/summarize.py" "$O"/runs/*.json) \
  | tee "$O/summary.txt"
tar czf "$O/all.tgz" -C "$O" runs && rm -rf "$O/runs"
echo "done at $(elapsed) s"
