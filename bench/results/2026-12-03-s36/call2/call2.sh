#!/usr/bin/env bash
# Session 36, call 2. Call 1's A/B had no baseline (kit g carries no Python extension). Kit f
# (session 35's: main's kernels) against kit s (bucket 160's half tile in two 96-column value
# slices, branch wip/sm90-value-slices at 9c5fe2e), alternated, three rounds each, one seed:
# SD 1.5's 16 x 16 level at batch 2 (the benchmark case) and 1, its cross-attention, head dim 144,
# and batch 4 (128 half tiles: a wave unsliced, two sliced, so kit s runs 128-row tiles there);
# SD 1.5 32 x 32 and ViT-B/16 as controls. Then every case, kit s beside cuDNN and FA2.
# carry: [".devbin/s35b", ".devbin/s36"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res2; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s35b/kit-f.tar.xz -C /tmp || exit 1
tar xJf .devbin/s36/kit-s.tar.xz -C /tmp || exit 1
for k in f s; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 36"
SHAPES="--case sd15-self-16 --shape 1,8,256,256,160 --shape 2,8,256,77,160 --shape 2,8,256,256,144 --shape 4,8,256,256,160 --case sd15-self-32 --case vit-b16-224"
n=0
for K in s f f s s f; do
  n=$((n + 1))
  PYTHONPATH=/tmp/pkg-$K LD_LIBRARY_PATH=/tmp/kit-$K timeout -k 5 60 $B $SHAPES --json $R/vs-$n-$K.json > $R/vs-$n-$K.txt 2>&1
  echo "== vs $n $K rc=$? $(el)"
done
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
    a, b = min(v["s"]), min(v["f"])
    print(f"{case:28s} s {a:7.2f} f {b:7.2f} us  s/f {a / b:6.3f}  s {[round(x, 2) for x in v['s']]} f {[round(x, 2) for x in v['f']]}  err s {err[case].get('s')} f {err[case].get('f')}")
PY
PYTHONPATH=/tmp/pkg-s LD_LIBRARY_PATH=/tmp/kit-s timeout -k 5 150 python3 -m flashvision.bench --impl flashvision --impl sdpa-cudnn --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/all-gpu.json > $R/all-gpu.txt 2>&1
echo "== every case, kit s and peers rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/all-gpu.txt
echo "$(el) done"; save
