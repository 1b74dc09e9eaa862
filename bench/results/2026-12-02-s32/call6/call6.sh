#!/usr/bin/env bash
# Session 33, call 6. Kits f (main at a46d5c8) and p (f with the split combine launched as the
# forward's programmatic dependent: the forwards signal at their start, the combine waits for
# them before it reads the partials; landed as a48ae35).
# 1. The split suites on kit p in shards, and two of them under compute-sanitizer memcheck.
# 2. The cases that split (SDXL self, the VAE) and controls, kits f, p, p, f, f, p.
# 3. Every GPU gtest on kit p (12 shards) and the Python suite beside them.
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res6; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-f kit-p; do
  tar xJf .devbin/s32/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
T=/tmp/kit-p/bin/flashvision_gpu_tests
use kit-p
F='*FwdSplit*:*HeadDimsAbove256*:*Fp8*Split*'
pids=()
for i in 0 1 2 3 4 5; do
  GTEST_FILTER="$F" GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i timeout -k 5 120 $T > /tmp/split$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "split shard rc=$?"; done
cat /tmp/split*.txt > $R/gtests-split-p.txt
echo "== split suites $(el)"; grep -h "^\[  PASSED" /tmp/split*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/split*.txt | sort -u | head
timeout -k 5 100 compute-sanitizer --tool memcheck $T --gtest_filter='*FwdSplit.SeveralWavesWithATail/bf16_sm90:*FwdSplit.SeveralWavesWithATail/bf16_sm80' > $R/memcheck-p.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-p.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3"
CASES="--case sdxl-self-128 --case vae-mid-512 --case vit-b16-224 --case sd15-self-32 --case sweep-d128-n4096 --case flux-1024"
n=0
for K in kit-f kit-p kit-p kit-f kit-f kit-p; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B $CASES --json $R/pdl-$n-$K.json > $R/pdl-$n-$K.txt 2>&1
  echo "== pdl $n $K rc=$? $(el)"
done
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/pdl-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    a, b = min(v["f"]), min(v["p"])
    print(f"{case:20s} f {a:9.4f} p {b:9.4f} p/f {b / a:6.3f}  all f {[round(x, 4) for x in v['f']]} p {[round(x, 4) for x in v['p']]}")
PY
use kit-p
(timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-p.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-p.txt) &
ppid=$!
pids=()
for i in $(seq 0 11); do
  GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-p.txt.gz
echo "== kit-p GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-p.txt
echo "$(el) done"; save
