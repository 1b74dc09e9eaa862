#!/usr/bin/env bash
# Session 36, call 3. Kit v: the sliced half tile as it would land (branch wip/sm90-value-slices
# at cdcfa31): a kernel of its own (kValueCols = 96) beside the whole half tile, picked per problem
# (FwdParams::value_cols; FLASHVISION_SM90_FWD_SLICES auto/1/0). v0 is kit v with the variable at
# 0; kit f is session 35's (main's kernels).
# 1. Every GPU gtest and the Python suite on kit v; the new suite under memcheck.
# 2. The shapes the slices change and controls, kits v, v0, f alternated, three rounds of v and v0.
# 3. Every case, kit v beside cuDNN and FA2.
# carry: [".devbin/s35b", ".devbin/s36"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35b/kit-f.tar.xz -C /tmp || exit 1
tar xJf .devbin/s36/kit-v.tar.xz -C /tmp || exit 1
for k in f v; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
T=/tmp/kit-v/bin/flashvision_gpu_tests
(PYTHONPATH=/tmp/pkg-v LD_LIBRARY_PATH=/tmp/kit-v timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-v.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-v.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  LD_LIBRARY_PATH=/tmp/kit-v GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-v.txt.gz
echo "== kit-v GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
grep -h "OK \] .*ValueSlice" /tmp/shard*.txt
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-v.txt
LD_LIBRARY_PATH=/tmp/kit-v GTEST_FILTER='Cuda/GpuSm90ValueSlices.*/bf16' timeout -k 5 200 \
  compute-sanitizer --tool memcheck $T > $R/memcheck-v.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-v.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 36"
SHAPES="--case sd15-self-16 --shape 1,8,256,256,160 --shape 2,8,256,77,160 --shape 2,8,256,256,144 --shape 4,8,256,256,160 --case sd15-self-32 --case vit-b16-224 --case sweep-d128-n4096"
n=0
for K in v v0 f v0 v v v0 f; do
  n=$((n + 1))
  kit=${K%0}
  if [ $K = v0 ]; then export FLASHVISION_SM90_FWD_SLICES=0; else unset FLASHVISION_SM90_FWD_SLICES; fi
  PYTHONPATH=/tmp/pkg-$kit LD_LIBRARY_PATH=/tmp/kit-$kit timeout -k 5 60 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_SLICES
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
    a, b, c = min(v["v"]), min(v["v0"]), min(v["f"])
    print(f"{case:28s} v {a:8.2f} v0 {b:8.2f} f {c:8.2f} us  v/v0 {a / b:6.3f} v0/f {b / c:6.3f}  v {[round(x, 2) for x in v['v']]} v0 {[round(x, 2) for x in v['v0']]} f {[round(x, 2) for x in v['f']]}  err v {err[case].get('v')} v0 {err[case].get('v0')}")
PY
PYTHONPATH=/tmp/pkg-v LD_LIBRARY_PATH=/tmp/kit-v timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit v and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
