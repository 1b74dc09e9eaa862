#!/usr/bin/env bash
# Session 30, call 2: half tiles (64 query rows, one consumer warpgroup; branch
# wip/sm90-half-tiles, kit h built for head dims 64, 80, 128 and 160). The GPU tests that touch
# the sm90 forward's tiles on kit h; main against kit h in alternated processes on the shapes
# whose half tiles fit one wave (SD 1.5 16 x 16 self and cross, ViTs and DiT at batch 1-2, a small
# D = 128 problem) and two controls; kit h with the rows forced to 64 and 128; kit h beside cuDNN
# and FA2.
# carry: [".devbin/s30"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-main kit-h; do
  tar xJf .devbin/s30/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
use kit-h; T=/tmp/kit-h/bin/flashvision_gpu_tests
F='*HalfTile*:*KeyBlock*:*FwdSplit*:*CrossTile*:*WideTile*:*QBuffers*:*Multicast*'
shards=8; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 150 $T --gtest_filter="$F" >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-h.txt.gz
echo "== kit-h gtests ($F) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T \
  --gtest_filter='*HalfTiles.CausalGroupedLayoutsAndVarlen/bf16:*HalfTiles.ChosenWithoutBeingAsked/bf16' > $R/memcheck-h.txt 2>&1
echo "== memcheck rc=$? $(el)"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " $R/memcheck-h.txt
save
S="--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --shape 2,8,256,77,160 --shape 1,12,197,197,64 --shape 2,12,197,197,64 --shape 1,16,257,257,80 --shape 2,16,256,256,72 --shape 1,24,256,256,128 --shape 1,24,1024,1024,128"
i=0
for K in kit-main kit-h kit-h kit-main; do
  i=$((i+1)); use $K
  timeout -k 5 60 python3 -m flashvision.bench --impl flashvision $S --cuda-graphs --budget 0.3 \
    --json $R/ab-$i-$K.json > $R/ab-$i-$K.txt 2>&1
  echo "== A/B round $i $K rc=$? $(el)"
done
use kit-h
for r in 64 128; do
  FLASHVISION_SM90_FWD_ROWS=$r timeout -k 5 60 python3 -m flashvision.bench --impl flashvision $S --cuda-graphs \
    --budget 0.3 --json $R/rows-$r.json > $R/rows-$r.txt 2>&1
  echo "== kit-h rows $r rc=$? $(el)"
done
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(R + "/ab-*.json")) + sorted(glob.glob(R + "/rows-*.json")):
    kit = f.rsplit("/", 1)[1].split("-", 2)[-1][:-5] if "/ab-" in f else f.rsplit("/", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r.get("ms"):
            key = r["case"] if not r["case"].startswith("shape") else "B%d H%d %dx%d D%d" % (r["B"], r["H"], r["Nq"], r["Nk"], r["D"])
            t[key].setdefault(kit, []).append(r["ms"] * 1000)
print(f"{'case':26s} {'main us':>16s} {'h us':>16s} {'h/main':>7s} {'rows64':>8s} {'rows128':>8s}")
for c, d in t.items():
    m, v = d.get("kit-main", []), d.get("kit-h", [])
    r64, r128 = d.get("rows-64", [0]), d.get("rows-128", [0])
    if m and v:
        print(f"{c:26s} {min(m):7.1f}/{max(m):7.1f} {min(v):7.1f}/{max(v):7.1f} {min(v)/min(m):7.3f} {r64[0]:8.1f} {r128[0]:8.1f}")
PY
save
timeout -k 5 90 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash $S --cuda-graphs \
  --budget 0.3 --json $R/peers-h.json > $R/peers-h.txt 2>&1
echo "== kit-h with peers rc=$? $(el)"; grep -E "flashvision " $R/peers-h.txt
echo "$(el) done"; save
