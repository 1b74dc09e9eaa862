#!/usr/bin/env bash
# NOT RUN in session 40: the device was not lent again after call 1. To run it, build the kits
# from main (mf) and from main with call2/early-block-waits.patch applied (wf; wt the same with
# -DFLASHVISION_SM90_TIMELINES=ON and bucket 128 only), and in the script read the timelines with
# FLASHVISION_SM90_TIMELINES (the variable trace_cases.py sets was FLASHVISION_SM90_TRACE on the
# wip branch of call 1) and python -m flashvision.bench.timelines.
# Session 40, call 2. Kits built on the development machine:
#   mf: main (f119ae9's kernels), every bucket;
#   wf: each step of the key-block loop waits for the next step's K and V while its P V runs,
#       instead of at the step's top (wip/sm90-early-block-waits), every bucket, with the GPU gtests;
#   wt: the same change with the diagnostic timelines (wip/sm90-trace), bucket 128 only.
# 1. One traced forward of each D = 128 case on kit wt (call1's trace_cases.py, analyze_trace.py).
# 2. mf and wf alternated, three rounds each, on the D = 128 cases and the image cases near 1.2x.
# 3. Every GPU gtest on kit wf.
# 4. Kit wf beside cuDNN and FA2 on every case.
# carry: [".devbin/s40"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
cat $R/gpu.txt
D1=bench/results/2026-12-07-s40/call1
for K in mf wf wt; do
  tar xJf .devbin/s40/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use wt; mkdir -p $R/trace-wt
timeout -k 5 60 python3 $D1/trace_cases.py $R/trace-wt; echo "== traces wt rc=$? $(el)"
python3 $D1/analyze_trace.py $R/trace-wt/*-1.bin > $R/trace-wt.txt 2>&1; gzip $R/trace-wt/*.bin
grep -E "==|loop_period|kv_wait |loop_pv_after|tile beyond" $R/trace-wt.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.25 --seed 40"
SHAPES="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048
  --case sweep-d64-n4096 --case sweep-d256-n4096 --case sd15-self-32 --case sd15-self-16 --case vit-l14-336 --case dit-xl2-512"
n=0
for K in mf wf wf mf mf wf; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
python3 - $R <<'PY' | tee $R/vs-summary.txt
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
err = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{sys.argv[1]}/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
            err[r["case"]][kit] = r.get("max_err")
for case, v in t.items():
    base = min(v["mf"])
    print(f"{case:20s} mf {base:9.2f} us  wf/mf {min(v['wf']) / base:6.3f}  err mf {err[case]['mf']:.1e} wf {err[case]['wf']:.1e}")
    print(f"    mf {[round(x, 1) for x in v['mf']]}  wf {[round(x, 1) for x in v['wf']]}")
PY
save
T=/tmp/kit-wf/bin/flashvision_gpu_tests
export LD_LIBRARY_PATH=/tmp/kit-wf
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 200 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-wf.txt.gz
echo "== kit-wf GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
save
use wf
timeout -k 5 120 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit wf and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
