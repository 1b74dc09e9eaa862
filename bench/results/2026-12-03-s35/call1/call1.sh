#!/usr/bin/env bash
# Session 35, call 1. Kits: m (main at 21364fd with the backend passing the programmatic-launch
# choice down: FwdCombineParams::early_start, BwdParams::tail_early) and n (m with the narrow
# first key block, branch wip/sm90-narrow-first; n0 is kit n run with
# FLASHVISION_SM90_FWD_NARROW_FIRST=0).
# 1. Every GPU gtest on kit n (12 shards) and the Python suite beside them; the narrow-first
#    suite under compute-sanitizer memcheck.
# 2. ViT-L/14 (the case the narrow block serves) and controls, flashvision alone, kits m, n, n0,
#    n0, n, m.
# 3. Every case, kit n beside cuDNN and FA2.
# carry: [".devbin/s35"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-m kit-n; do tar xJf .devbin/s35/$K.tar.xz -C /tmp || exit 1; done
for K in kit-m kit-n; do
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
use kit-n
T=/tmp/kit-n/bin/flashvision_gpu_tests
(timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-n.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-n.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-n.txt.gz
echo "== kit-n GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
grep -h "OK \] .*NarrowFirst" /tmp/shard*.txt | head -20
save
wait $ppid; echo "== pytest $(el)"; tail -4 $R/pytest-n.txt
GTEST_FILTER='Cuda/GpuSm90NarrowFirst.LastBlockLengthsMatchTheReference/bf16' timeout -k 5 120 \
  compute-sanitizer --tool memcheck $T > $R/memcheck-n.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -3 $R/memcheck-n.txt
save
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.25"
CASES="--case vit-l14-336 --case vit-b16-224 --case vit-h14-224 --case dit-xl2-512 --case sd15-self-32 --case sdxl-self-128 --case flux-1024 --case sweep-d64-n1024"
n=0
for K in kit-m kit-n kit-n0 kit-n0 kit-n kit-m; do
  n=$((n + 1))
  if [ $K = kit-n0 ]; then use kit-n; export FLASHVISION_SM90_FWD_NARROW_FIRST=0; else use $K; unset FLASHVISION_SM90_FWD_NARROW_FIRST; fi
  timeout -k 5 60 $B $CASES --json $R/nf-$n-$K.json > $R/nf-$n-$K.txt 2>&1
  echo "== nf $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_NARROW_FIRST
save
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/nf-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"])
for case, v in t.items():
    m, n, n0 = min(v["m"]), min(v["n"]), min(v["n0"])
    print(f"{case:18s} m {m:8.4f} n {n:8.4f} n0 {n0:8.4f}  n/m {n / m:6.3f} n/n0 {n / n0:6.3f} n0/m {n0 / m:6.3f}  m {[round(x, 4) for x in v['m']]} n {[round(x, 4) for x in v['n']]} n0 {[round(x, 4) for x in v['n0']]}")
PY
use kit-n
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit n and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
