#!/usr/bin/env bash
# Session 33, call 5. Kit f (main at 2f3acad). Whether the tile model's choices still hold on the
# image cases below 1.2x cuDNN and two controls: each forced setting of FLASHVISION_SM90_FWD_ROWS,
# _MULTICAST and _SPLIT against the model's (auto), two rounds in alternated order.
# carry: [".devbin/s32"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res5; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
tar xJf .devbin/s32/kit-f.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-f/python/_C*.so /tmp/pkg/flashvision/
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/kit-f
CASES="--case vit-l14-336 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case flux-1024 --case flux-2048 --case dit-xl2-512 --case sd15-self-64"
SETTINGS="auto ROWS=128 ROWS=192 ROWS=64 MULTICAST=1 MULTICAST=0 SPLIT=1 SPLIT=0"
for round in 1 2; do
  order=$SETTINGS; [ $round = 2 ] && order=$(echo $SETTINGS | tr ' ' '\n' | tac | tr '\n' ' ')
  for S in $order; do
    envs=(); [ $S != auto ] && envs=("FLASHVISION_SM90_FWD_$S")
    env "${envs[@]}" timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision \
      --cuda-graphs --budget 0.2 $CASES --json $R/knob-$round-$S.json > $R/knob-$round-$S.txt 2>&1
    echo "== round $round $S rc=$? $(el)"
  done
  save
done
python3 - $R <<'PY'
import json, glob, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/knob-*.json")):
    setting = f.split("/")[-1].split("-", 2)[2][:-5]
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[r["case"]][setting].append(r["ms"])
for case, v in t.items():
    auto = min(v["auto"])
    cells = "  ".join(f"{s} {min(x) / auto:5.3f}" for s, x in v.items() if s != "auto")
    print(f"{case:16s} auto {auto:8.4f} ms  {cells}")
PY
echo "$(el) done"; save
