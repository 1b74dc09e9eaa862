#!/usr/bin/env bash
# Session 29, call 1: V transposed inside the FP8 kernel (kit vt, branch wip/fp8-vt-in-kernel)
# against main's pre-pass (kit main, 7ddf97d). The FP8 gtests on vt; every FP8 case timed with
# each kit in alternated processes (main, vt, vt, main); then main's GPU gtests and Python suite
# (main's commits after session 28's last kit had not run on a GPU) beside vt's Python FP8 tests
# and a memcheck of two vt FP8 tests.
# carry: [".devbin/s29"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-main kit-vt; do
  tar xJf .devbin/s29/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
use kit-vt
timeout -k 5 100 /tmp/kit-vt/bin/flashvision_gpu_tests --gtest_filter='*Fp8*' > $R/gtests-fp8-vt.txt 2>&1
echo "== vt fp8 gtests rc=$? $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-fp8-vt.txt | head -20
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case flux-1024 --case flux-2048 --case video-49f-720p"
for d in 64 128 256; do for n in 1024 4096 16384; do CASES="$CASES --case sweep-d$d-n$n"; done; done
i=0
for K in kit-main kit-vt kit-vt kit-main; do
  i=$((i+1)); use $K
  timeout -k 5 90 python3 -m flashvision.bench --impl flashvision-fp8 $CASES --cuda-graphs --budget 0.2 \
    --json $R/ab-$i-$K.json > $R/ab-$i-$K.txt 2>&1
  echo "== A/B round $i $K rc=$? $(el)"
done
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(R + "/ab-*.json")):
    kit = f.split("-", 2)[-1][:-5]
    for r in json.load(open(f))["records"]:
        if r.get("impl") == "flashvision-fp8" and r.get("ms"):
            t[r["case"]].setdefault(kit, []).append(r["ms"])
print(f"{'case':20s} {'main ms':>16s} {'vt ms':>16s} {'vt/main':>8s}")
for c, d in t.items():
    m, v = d.get("kit-main", []), d.get("kit-vt", [])
    if m and v:
        print(f"{c:20s} {min(m):8.4f}/{max(m):7.4f} {min(v):8.4f}/{max(v):7.4f} {min(v)/min(m):8.3f}")
PY
T=/tmp/kit-main/bin/flashvision_gpu_tests
(use kit-vt; timeout -k 5 150 compute-sanitizer --tool memcheck /tmp/kit-vt/bin/flashvision_gpu_tests \
  --gtest_filter='GpuSm90Fp8.PartialGroupsAndBlocksOfKeys:GpuSm90Fp8.OneBlockTilesCrossTile' > $R/memcheck-fp8-vt.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-fp8-vt.txt) &
mpid=$!
(use kit-vt; timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8.py > $R/pytest-fp8-vt.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-fp8-vt.txt) &
fpid=$!
use kit-main
(timeout -k 5 175 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-main.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-main.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 175 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-main.txt.gz
echo "== main GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $fpid; echo "== vt pytest fp8 $(el)"; tail -3 $R/pytest-fp8-vt.txt
wait $mpid; echo "== vt memcheck $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $R/memcheck-fp8-vt.txt | head
wait $ppid; echo "== main pytest $(el)"; tail -4 $R/pytest-main.txt
save
echo "$(el) done"
