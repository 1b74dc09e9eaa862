#!/usr/bin/env bash
# Session 29, call 4: the landing build, kit h2 (wip/fp8-widths at 598760a: call 3's kit h with
# the kernels that read V transposed by the pass compiled apart from those that transpose it, so
# that the former have no staging slots; every head-dim bucket). FP8 gtests (both ways of
# transposing V); every FP8 case timed with main and h2 in alternated processes; every case with
# flashvision bf16 and FP8 beside cuDNN and FA2; then the other GPU gtests, the whole Python suite
# and a memcheck of two FP8 tests.
# carry: [".devbin/s29"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-main kit-h2; do
  tar xJf .devbin/s29/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
use kit-h2; T=/tmp/kit-h2/bin/flashvision_gpu_tests
timeout -k 5 90 $T --gtest_filter='*Fp8*' > $R/gtests-fp8-h2.txt 2>&1; rc=$?
echo "== kit-h2 fp8 gtests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/gtests-fp8-h2.txt | tail -12
[ $rc = 0 ] || { save; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case flux-1024 --case flux-2048 --case video-49f-720p"
for d in 64 128 256; do for n in 1024 4096 16384; do CASES="$CASES --case sweep-d$d-n$n"; done; done
i=0
for K in kit-main kit-h2 kit-h2 kit-main; do
  i=$((i+1)); use $K
  timeout -k 5 60 python3 -m flashvision.bench --impl flashvision-fp8 $CASES --cuda-graphs --budget 0.2 \
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
print(f"{'case':20s} {'main ms (min/max)':>22s} {'h ms (min/max)':>22s} {'h/main':>7s}")
for c, d in t.items():
    m, v = d.get("kit-main", []), d.get("kit-h2", [])
    if m and v:
        print(f"{c:20s} {min(m):10.4f}/{max(m):10.4f} {min(v):10.4f}/{max(v):10.4f} {min(v)/min(m):7.3f}")
PY
save
use kit-h2
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl flashvision-fp8 --impl sdpa-cudnn \
  --impl sdpa-flash --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case rc=$? $(el)"; grep "best peer" $R/all-gpu.txt | tail -2
save
(timeout -k 5 120 compute-sanitizer --tool memcheck $T \
  --gtest_filter='GpuSm90Fp8.ShortWidthAtHeadDim64:GpuSm90Fp8.GroupedHeadsLayoutsCausalDescales' > $R/memcheck-fp8-h2.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-fp8-h2.txt) &
mpid=$!
(timeout -k 5 185 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-h2.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-h2.txt) &
ppid=$!
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 175 $T --gtest_filter='-*Fp8*' >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-h2.txt.gz
echo "== kit-h2 GPU gtests (without FP8) $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -20
save
wait $mpid; echo "== kit-h2 memcheck $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $R/memcheck-fp8-h2.txt | head
wait $ppid; echo "== kit-h2 pytest $(el)"; tail -4 $R/pytest-h2.txt
save
echo "$(el) done"
