#!/usr/bin/env bash
# Session 32, call 3. Kits: e (main's kernels, as in session 31's call 4) and f (branch
# wip/fast-finalize: the online softmax's finalize takes 1/sum and log(sum) with __fdividef and
# __logf instead of IEEE division and logf).
# 1. Every case: kit f beside cuDNN and FA2, then flashvision alone on kits e, f, e, f.
# 2. Every GPU gtest on kit f (12 shards) and the Python suite beside them.
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-e kit-f; do
  tar xJf .devbin/s32/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
use kit-f
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit f and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
save
n=0
for K in kit-e kit-f kit-e kit-f; do
  n=$((n + 1)); use $K
  timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.2 \
    --json $R/fin-$n-$K.json > $R/fin-$n-$K.txt 2>&1
  echo "== fin $n $K rc=$? $(el)"
done
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/fin-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    e, f = min(v["e"]), min(v["f"])
    print(f"{case:20s} e {e:9.4f} f {f:9.4f} f/e {f / e:6.3f}  all e {v['e']} f {v['f']}")
PY
use kit-f
T=/tmp/kit-f/bin/flashvision_gpu_tests
(timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-f.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-f.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-f.txt.gz
echo "== kit-f GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -4 $R/pytest-f.txt
echo "$(el) done"; save
