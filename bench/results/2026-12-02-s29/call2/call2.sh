#!/usr/bin/env bash
# Session 29, call 2: V transposed inside the FP8 kernel with call 1's hang fixed (kit vt2: the
# end-of-loads word per staging slot; 7cec978 on wip/fp8-vt-in-kernel), and on top of it the FP8
# key widths (kit w: 256 keys at D = 64 for 129-256 keys, 128 keys at D = 128 where they pad less;
# wip/fp8-widths, head dims 64/128/256 only). FP8 gtests of both; every FP8 case timed with main,
# vt2 and w in alternated processes; then w's Python FP8 tests and a memcheck of two FP8 tests.
# carry: [".devbin/s29"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for K in kit-main kit-vt2 kit-w; do
  tar xJf .devbin/s29/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
ok=""
for K in kit-vt2 kit-w; do
  use $K
  timeout -k 5 60 /tmp/$K/bin/flashvision_gpu_tests --gtest_filter='*Fp8*' > $R/gtests-fp8-$K.txt 2>&1; rc=$?
  echo "== $K fp8 gtests rc=$rc $(el)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[ RUN" $R/gtests-fp8-$K.txt | tail -12
  [ $rc = 0 ] && ok="$ok $K"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case flux-1024 --case flux-2048 --case video-49f-720p"
for d in 64 128 256; do for n in 1024 4096 16384; do CASES="$CASES --case sweep-d$d-n$n"; done; done
i=0
for K in kit-main kit-vt2 kit-w kit-w kit-vt2 kit-main; do
  i=$((i+1))
  [ $K = kit-main ] || [[ " $ok " == *" $K "* ]] || continue
  use $K
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
kits = ["kit-main", "kit-vt2", "kit-w"]
print(f"{'case':20s}" + "".join(f"{k + ' ms (min/max)':>24s}" for k in kits) + "  vt2/main   w/main")
for c, d in t.items():
    row = f"{c:20s}"
    for k in kits:
        v = d.get(k, [])
        row += f"{min(v):12.4f}/{max(v):11.4f}" if v else f"{'-':>24s}"
    m = min(d.get("kit-main", [0])) or None
    for k in ("kit-vt2", "kit-w"):
        row += f"{min(d[k]) / m:9.3f}" if m and d.get(k) else f"{'-':>9s}"
    print(row)
PY
save
K=kit-w; use $K; T=/tmp/$K/bin/flashvision_gpu_tests
(timeout -k 5 120 compute-sanitizer --tool memcheck $T \
  --gtest_filter='GpuSm90Fp8.PartialGroupsAndBlocksOfKeys:GpuSm90Fp8.ShortWidthAtHeadDim64' > $R/memcheck-fp8-w.txt 2>&1
 echo "memcheck rc=$?" >> $R/memcheck-fp8-w.txt) &
mpid=$!
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8.py > $R/pytest-fp8-w.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-fp8-w.txt
echo "== w pytest fp8 $(el)"; tail -3 $R/pytest-fp8-w.txt
wait $mpid; echo "== w memcheck $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED|rc=" $R/memcheck-fp8-w.txt | head
save
echo "$(el) done"
