#!/usr/bin/env bash
# Session 37, call 2. Kit q: what lands (branch wip/sm90-q-prescale): Q scaled in the kernel by
# the producer warpgroup's idle warps (each product rounded once: packed FMAs of the factor's
# bf16/f16 high part and the rest), the softmax's fast path without the FFMA for rows anchored at
# a max of 0; by default for inference forwards (no LSE asked for) up to D = 128 whose tiles walk
# 4 key blocks or more. q0 is kit q with FLASHVISION_SM90_FWD_PRESCALE=0.
# 1. Every GPU gtest and the Python suite on kit q; the new suite under memcheck and racecheck.
# 2. The cases it changes and controls, q and q0 alternated, three rounds each, one seed; the
#    long sweeps with telemetry.
# 3. Every case, kit q beside cuDNN and FA2.
# carry: [".devbin/s37"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s37/kit-q.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-q && cp -r python/flashvision /tmp/pkg-q/ && cp /tmp/kit-q/python/_C*.so /tmp/pkg-q/flashvision/
export PYTHONUNBUFFERED=1
T=/tmp/kit-q/bin/flashvision_gpu_tests
(PYTHONPATH=/tmp/pkg-q LD_LIBRARY_PATH=/tmp/kit-q timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-q.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-q.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-q GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-q.txt.gz
echo "== kit-q GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
grep -h "OK \] .*QueryScaling" /tmp/shard*.txt
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-q.txt
F='Cuda/GpuSm90QueryScaling.SplitClustersAndWideTiles/bf16:Cuda/GpuSm90QueryScaling.CausalGroupedLayoutsVarlenAndScales/bf16'
LD_LIBRARY_PATH=/tmp/kit-q GTEST_FILTER="$F" timeout -k 5 150 compute-sanitizer --tool memcheck $T > $R/memcheck-q.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-q.txt
LD_LIBRARY_PATH=/tmp/kit-q GTEST_FILTER='Cuda/GpuSm90QueryScaling.SeveralTilesPerCta/bf16' timeout -k 5 120 compute-sanitizer --tool racecheck $T > $R/racecheck-q.txt 2>&1
echo "== racecheck rc=$? $(el)"; tail -3 $R/racecheck-q.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 37"
SHAPES="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case sweep-d128-n16384 --case sweep-d256-n4096 --case sdxl-self-128 --case flux-1024 --case flux-2048 --case sd15-self-64 --case sd15-self-32 --case dit-xl2-512 --case vit-l14-336 --case vit-b16-224"
n=0
for K in q q0 q0 q q q0; do
  n=$((n + 1))
  if [ $K = q0 ]; then export FLASHVISION_SM90_FWD_PRESCALE=0; else unset FLASHVISION_SM90_FWD_PRESCALE; fi
  PYTHONPATH=/tmp/pkg-q LD_LIBRARY_PATH=/tmp/kit-q timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
for K in q0 q; do
  if [ $K = q0 ]; then export FLASHVISION_SM90_FWD_PRESCALE=0; else unset FLASHVISION_SM90_FWD_PRESCALE; fi
  PYTHONPATH=/tmp/pkg-q LD_LIBRARY_PATH=/tmp/kit-q timeout -k 5 60 $B --budget 1.0 --telemetry --case sweep-d64-n16384 --case sweep-d128-n16384 --json $R/tel-$K.json > $R/tel-$K.txt 2>&1
  echo "== telemetry $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_PRESCALE
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
err = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
            err[r["case"]][kit] = r.get("max_err")
for case, v in t.items():
    a, b = min(v["q"]), min(v["q0"])
    print(f"{case:20s} q {a:9.2f} q0 {b:9.2f} us  q/q0 {a / b:6.3f}  q {[round(x, 1) for x in v['q']]} q0 {[round(x, 1) for x in v['q0']]}  err q {err[case].get('q')} q0 {err[case].get('q0')}")
PY
grep -hE "sweep|clock|W " $R/tel-*.txt | head -20
PYTHONPATH=/tmp/pkg-q LD_LIBRARY_PATH=/tmp/kit-q timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit q and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
