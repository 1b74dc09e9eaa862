#!/usr/bin/env bash
# Session 30, call 4: the half tiles' key blocks split between both consumers (kit k: branch
# wip/sm90-key-split, every bucket) against the landed half tiles of one consumer (kit hf,
# 1e53acb) in alternated processes on the shapes whose half tiles fit one wave; kit k's GPU gtests
# (12 shards), memcheck and racecheck on half-tile tests; every case beside cuDNN and FA2 if time
# is left. The first attempt (attempt1-*: kit k at dda9b66) hung in the first half-tile test: the
# two consumers took GEMM turns although their shares of the key blocks need not pair up; kit k is
# now dbedfa1 (no turns in half tiles).
# carry: [".devbin/s30"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-hf kit-k; do
  tar xJf .devbin/s30/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
use kit-k; T=/tmp/kit-k/bin/flashvision_gpu_tests
timeout -k 5 60 $T --gtest_filter='*HalfTile*' > $R/gtests-half-k.txt 2>&1; rc=$?
echo "== kit-k half-tile gtests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-half-k.txt | tail -12
[ $rc = 0 ] || { save; exit 1; }
S="--case sd15-self-16 --shape 2,8,256,77,160 --shape 1,12,197,197,64 --shape 2,12,197,197,64 --shape 1,16,257,257,80 --shape 2,16,256,256,72 --shape 1,24,256,256,128 --shape 1,8,1024,1024,128"
i=0
for K in kit-hf kit-k kit-k kit-hf; do
  i=$((i+1)); use $K
  timeout -k 5 60 python3 -m flashvision.bench --impl flashvision $S --cuda-graphs --budget 0.3 \
    --json $R/ab-$i-$K.json > $R/ab-$i-$K.txt 2>&1
  echo "== A/B round $i $K rc=$? $(el)"
done
use kit-k
FLASHVISION_SM90_FWD_ROWS=128 timeout -k 5 60 python3 -m flashvision.bench --impl flashvision $S --cuda-graphs \
  --budget 0.3 --json $R/rows-128.json > $R/rows-128.txt 2>&1
echo "== kit-k rows 128 rc=$? $(el)"
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(R + "/ab-*.json")) + sorted(glob.glob(R + "/rows-*.json")):
    name = f.rsplit("/", 1)[1][:-5]
    kit = name.split("-", 2)[-1] if name.startswith("ab-") else name
    for r in json.load(open(f))["records"]:
        if r.get("ms"):
            key = "B%d H%d %dx%d D%d" % (r["B"], r["H"], r["Nq"], r["Nk"], r["D"])
            t[key].setdefault(kit, []).append(r["ms"] * 1000)
print(f"{'case':26s} {'hf us':>16s} {'k us':>16s} {'k/hf':>6s} {'k rows128':>9s}")
for c, d in t.items():
    m, v, r = d.get("kit-hf", []), d.get("kit-k", []), d.get("rows-128", [0])
    if m and v:
        print(f"{c:26s} {min(m):7.1f}/{max(m):7.1f} {min(v):7.1f}/{max(v):7.1f} {min(v)/min(m):6.3f} {r[0]:9.1f}")
PY
save
(timeout -k 5 100 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*HalfTiles.CausalGroupedLayoutsAndVarlen/bf16:*HalfTiles.SeveralTilesPerCta/bf16' > $R/memcheck-k.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-k.txt
 timeout -k 5 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T \
  --gtest_filter='*HalfTiles.ChosenWithoutBeingAsked/bf16' > $R/racecheck-k.txt 2>&1
 echo "racecheck rc=$?" >> $R/racecheck-k.txt) &
spid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-k.txt.gz
echo "== kit-k GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $spid; echo "== kit-k sanitizers $(el)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $R/memcheck-k.txt $R/racecheck-k.txt | head
save
if [ $(( $(date +%s) - t0 )) -lt 230 ]; then
  timeout -k 5 120 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
    --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
  echo "== every case rc=$? $(el)"; grep -E "sd15-self-16 +flashvision|best peer" $R/all-gpu.txt | tail -3
fi
echo "$(el) done"; save
