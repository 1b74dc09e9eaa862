#!/usr/bin/env bash
# Session 41, call 1. Kits built on the development machine (bench/results/2026-12-07-s41/README.md):
#   mf: main (db3bf24), every bucket;
#   wf: each step waits for the next step's K and V while its P V runs (wip/sm90-early-block-waits,
#       session 40's call2/early-block-waits.patch), every bucket;
#   rf: wf, and the softmax packs bf16 probabilities with an integer add and a byte permute instead
#       of F2FP (wip/sm90-int-round), bucket 128 only;
#   mt, wt, rt: the same three with -DFLASHVISION_SM90_TIMELINES=ON, bucket 128 only.
# 1. pipe_probe: does F2FP share MUFU's pipe?
# 2. mf, wf, rf alternated, three rounds (rf on the D = 128 cases only).
# 3. One recorded forward of each D = 128 case on mt, wt, rt (trace_cases.py), read with
#    python -m flashvision.bench.timelines.
# 4. Every GPU gtest on kit wf.
# 5. Nsight Compute on one D = 128 N = 4096 forward, mf and rf, while the call has time left: pipes,
#    issue, stalls, source view.
# carry: [".devbin/s41"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
D=bench/results/2026-12-07-s41/call1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
cat $R/gpu.txt
for K in mf wf rf mt wt rt; do
  tar xJf .devbin/s41/kit-$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/kit-$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
timeout -k 5 60 .devbin/s41/pipe_probe > $R/probe.txt 2>&1; echo "== probe rc=$? $(el)"; cat $R/probe.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.25 --seed 41"
D128="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048"
OTHER="--case sweep-d64-n4096 --case sweep-d256-n4096 --case sd15-self-32 --case sd15-self-16 --case vit-l14-336 --case dit-xl2-512"
n=0
for K in mf wf rf rf wf mf mf wf rf; do
  n=$((n + 1)); use $K
  if [ $K = rf ]; then S="$D128"; else S="$D128 $OTHER"; fi
  timeout -k 5 60 $B $S --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
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
    line = f"{case:20s} mf {base:9.2f} us"
    for k in ("wf", "rf"):
        if v.get(k):
            line += f"  {k}/mf {min(v[k]) / base:6.3f} (err {err[case][k]:.1e})"
    print(line + f"  err mf {err[case]['mf']:.1e}")
    print("    " + "  ".join(f"{k} {[round(x, 1) for x in v[k]]}" for k in ("mf", "wf", "rf") if v.get(k)))
PY
save
for K in mt wt rt; do
  use $K; mkdir -p $R/trace-$K
  timeout -k 5 60 python3 $D/trace_cases.py $R/trace-$K; echo "== traces $K rc=$? $(el)"
  python3 -m flashvision.bench.timelines $R/trace-$K/*-1.bin > $R/trace-$K.txt 2>&1; gzip $R/trace-$K/*.bin
  grep -E "==|step_|epilogue|beyond" $R/trace-$K.txt
done
save
T=/tmp/kit-wf/bin/flashvision_gpu_tests
export LD_LIBRARY_PATH=/tmp/kit-wf
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 170 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-wf.txt.gz
echo "== kit wf GPU gtests $(el)"
grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
save
P="sm__inst_executed_pipe_|sm__pipe_.*cycles_active|smsp__issue_active|smsp__inst_executed.sum|gpu__time_duration.sum|sm__cycles_elapsed.avg |warps_issue_stalled_.*per_issue_active"
for K in mf rf; do
  if [ $(( $(date +%s) - t0 )) -gt 430 ]; then echo "== ncu $K skipped (time)"; continue; fi
  use $K
  timeout -k 5 100 ncu --set full --import-source no -k regex:fwd_kernel --launch-skip 3 --launch-count 1 \
    -o /tmp/ncu-$K python3 $D/one_call.py flashvision 4 16 4096 4096 128 > $R/ncu-$K.txt 2>&1
  echo "== ncu $K rc=$? $(el)"
  ncu --import /tmp/ncu-$K.ncu-rep --page details > $R/details-$K.txt 2>&1
  ncu --import /tmp/ncu-$K.ncu-rep --page raw --csv 2>&1 | gzip > $R/raw-$K.csv.gz
  ncu --import /tmp/ncu-$K.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $R/sass-$K.csv.gz
  python3 - $R/raw-$K.csv.gz "$P" <<'PY' > $R/pipes-$K.txt
import csv, gzip, re, sys
rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
head = next(i for i, r in enumerate(rows) if "ID" in r)
names, units, vals = rows[head], rows[head + 1], rows[head + 2]
for n, u, v in zip(names, units, vals):
    if re.search(sys.argv[2], n):
        print(f"{n:80s} {v:>16s} {u}")
PY
  grep -E "pipe_xu|pipe_alu|pipe_fma|issue_active|duration" $R/pipes-$K.txt | head -20
  save
done
echo "$(el) done"; save
