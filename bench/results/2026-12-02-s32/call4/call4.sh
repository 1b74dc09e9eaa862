#!/usr/bin/env bash
# Session 32, call 4. Kits e (main before the fast finalize) and f (main with it, 2f3acad).
# 1. The Hopper forward on the cases call 3 left unclear (SD 1.5 32 x 32 +3 %?) and controls,
#    kits e, f, f, e, e, f.
# 2. The sm80 forward (--kernel sm80) on every case, kits e, f, e, f, and FA2 beside kit f.
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res4; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for K in kit-e kit-f; do
  tar xJf .devbin/s32/$K.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$K && cp -r python/flashvision /tmp/pkg-$K/ && cp /tmp/$K/python/_C*.so /tmp/pkg-$K/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/$1; }
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs"
n=0
for K in kit-e kit-f kit-f kit-e kit-e kit-f; do
  n=$((n + 1)); use $K
  timeout -k 5 60 $B --budget 0.3 --case sd15-self-32 --case sd15-self-16 --case vit-l14-336 \
    --case vit-b16-224 --case sd15-cross-64 --case flux-1024 --json $R/sm90-$n-$K.json > $R/sm90-$n-$K.txt 2>&1
  echo "== sm90 $n $K rc=$? $(el)"
done
save
n=0
for K in kit-e kit-f kit-e kit-f; do
  n=$((n + 1)); use $K
  timeout -k 5 100 $B --kernel sm80 --budget 0.2 --json $R/sm80-$n-$K.json > $R/sm80-$n-$K.txt 2>&1
  echo "== sm80 $n $K rc=$? $(el)"
done
save
use kit-f
timeout -k 5 150 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash \
  --cuda-graphs --budget 0.2 --json $R/sm80-fa2.json > $R/sm80-fa2.txt 2>&1
echo "== sm80 kit f beside FA2 rc=$? $(el)"; grep -E "flashvision +fwd|best peer" $R/sm80-fa2.txt
save
python3 - $R <<'PY'
import json, glob, sys, collections
for kind in ("sm90", "sm80"):
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in sorted(glob.glob(f"{sys.argv[1]}/{kind}-[0-9]*.json")):
        kit = f.rsplit("-", 1)[1][:-5]
        for r in json.load(open(f))["records"]:
            if r["impl"] == "flashvision" and r.get("ms"):
                t[r["case"]][kit].append(r["ms"])
    for case, v in t.items():
        e, f = min(v["e"]), min(v["f"])
        print(f"{kind} {case:20s} e {e:9.4f} f {f:9.4f} f/e {f / e:6.3f}  all e {[round(x, 4) for x in v['e']]} f {[round(x, 4) for x in v['f']]}")
PY
echo "$(el) done"; save
