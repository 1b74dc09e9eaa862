#!/usr/bin/env bash
# Session 38, call 3. Kit z (main at ab5917e): the host's tile choices forced each way on the
# cases still under 1.2x the best peer or their targets (Flux 1024, SD 1.5 32 x 32 and 16 x 16,
# D = 128 and 256 at N = 4096), each setting alternated with auto, two rounds, one seed.
# carry: [".devbin/s38"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res3; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
tar xJf .devbin/s38/kit-z.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg-z && cp -r python/flashvision /tmp/pkg-z/ && cp /tmp/kit-z/python/_C*.so /tmp/pkg-z/flashvision/
export PYTHONUNBUFFERED=1
B="python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.3 --seed 38"
n=0
run() {  # run NAME VAR VALUE CASES...: the cases with VAR=VALUE (VALUE "auto": unset)
  local name=$1 var=$2 value=$3; shift 3
  n=$((n + 1))
  if [ "$value" = auto ]; then unset "$var"; else export "$var=$value"; fi
  PYTHONPATH=/tmp/pkg-z LD_LIBRARY_PATH=/tmp/kit-z timeout -k 5 60 $B "$@" --json $R/$name-$n-$value.json > $R/$name-$n-$value.txt 2>&1
  echo "== $name $var=$value rc=$? $(el)"
  unset "$var"
}
FLUX="--case flux-1024"
for round in 1 2; do
  for v in auto 0 2 3 4; do run split FLASHVISION_SM90_FWD_SPLIT $v $FLUX --case sweep-d128-n4096 --case sweep-d256-n4096; done
  for v in auto 1; do run multicast FLASHVISION_SM90_FWD_MULTICAST $v --case sd15-self-32 --case sweep-d256-n4096 --case flux-1024; done
  for v in auto 64 192; do run rows FLASHVISION_SM90_FWD_ROWS $v --case sd15-self-32 --case sd15-self-16; done
  for v in auto 0 1; do run slices FLASHVISION_SM90_FWD_SLICES $v --case sd15-self-16; done
  save
done
python3 - $R <<'PY'
import json, glob, sys, collections, os
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    name, _, value = os.path.basename(f)[:-5].split("-")
    for r in json.load(open(f))["records"]:
        if r["impl"] == "flashvision" and r.get("ms"):
            t[(name, r["case"])][value].append(r["ms"] * 1000)
for (name, case), v in sorted(t.items()):
    auto = min(v["auto"])
    others = "  ".join(f"{k} {min(x):9.2f} ({min(x) / auto:5.3f})" for k, x in sorted(v.items()) if k != "auto")
    print(f"{name:9s} {case:18s} auto {auto:9.2f} us  {others}")
PY
echo "$(el) done"; save
