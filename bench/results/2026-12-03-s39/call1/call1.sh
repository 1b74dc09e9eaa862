#!/usr/bin/env bash
# Session 39, call 1. Kit o: tile ends overlapped at bucket 128's long widths (wip/sm90-overlap-
# tile-ends); FLASHVISION_SM90_FWD_OVERLAP=0 on the same build (o0) runs the per-tile loop; p adds
# FLASHVISION_SM90_FWD_PREFETCH_Q=1 (the producer brings the next unit's Q into L2): op, o0p.
# 1. o, o0, op, o0p alternated, three rounds each, one seed, on the D = 128 cases.
# 2. Every GPU gtest and the Python suite on kit o; the new suite under memcheck and racecheck.
# 3. Kit o beside cuDNN and FA2 on every case.
# carry: [".devbin/s39"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res1; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s39/kit-o.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-o && cp -r python/flashvision /tmp/pkg-o/ && cp /tmp/kit-o/python/_C*.so /tmp/pkg-o/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg-o LD_LIBRARY_PATH=/tmp/kit-o
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 39"
SHAPES="--case sweep-d128-n1024 --case sweep-d128-n4096 --case sweep-d128-n16384 --case flux-1024 --case flux-2048 --case video-49f-720p"
n=0
for K in o o0 op o0p o0p op o0 o o op o0 o0p; do
  n=$((n + 1))
  case $K in o0*) export FLASHVISION_SM90_FWD_OVERLAP=0 ;; *) unset FLASHVISION_SM90_FWD_OVERLAP ;; esac
  case $K in *p) export FLASHVISION_SM90_FWD_PREFETCH_Q=1 ;; *) unset FLASHVISION_SM90_FWD_PREFETCH_Q ;; esac
  timeout -k 5 80 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
unset FLASHVISION_SM90_FWD_OVERLAP FLASHVISION_SM90_FWD_PREFETCH_Q
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{sys.argv[1]}/vs-*.json")):
    kit = f.rsplit("-", 1)[1][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][kit].append(r["ms"] * 1000)
for case, v in t.items():
    base = min(v["o0"])
    print(f"{case:20s} o0 {base:9.2f} us " + "  ".join(
        f"{k}/o0 {min(v[k]) / base:6.3f}" for k in ("o", "op", "o0p")))
    print("   " + "  ".join(f"{k} {[round(x, 1) for x in v[k]]}" for k in ("o0", "o", "op", "o0p")))
PY
save
(timeout -k 5 230 python3 -m pytest -q -p no:cacheprovider tests/python > $R/pytest-o.txt 2>&1; echo "pytest rc=$?" >> $R/pytest-o.txt) &
ppid=$!
T=/tmp/kit-o/bin/flashvision_gpu_tests
shards=12; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 230 $T >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-o.txt.gz
echo "== kit-o GPU gtests $(el)"; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  SKIPPED \] [0-9]" /tmp/shard*.txt | awk '{s+=$4} END {print "skipped", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -30
wait $ppid; echo "== pytest $(el)"; tail -3 $R/pytest-o.txt
save
F='Cuda/GpuSm90OverlappedTiles.OneUnitPerCta/bf16:Cuda/GpuSm90OverlappedTiles.TheLastWaveSplitOverTheKeys/f16'
timeout -k 5 150 compute-sanitizer --tool memcheck $T --gtest_filter="$F" > $R/memcheck-o.txt 2>&1
echo "== memcheck rc=$? $(el)"; tail -2 $R/memcheck-o.txt
timeout -k 5 120 compute-sanitizer --tool racecheck $T --gtest_filter='Cuda/GpuSm90OverlappedTiles.SeveralUnitsPerCtaAtBothWidths/bf16' > $R/racecheck-o.txt 2>&1
echo "== racecheck rc=$? $(el)"; tail -2 $R/racecheck-o.txt
save
timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit o and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
