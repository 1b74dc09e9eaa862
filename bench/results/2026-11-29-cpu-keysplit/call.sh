#!/bin/bash
# Issue 4, sd15-self-16 through the real metric: python -m flashvision.bench --device cpu (16
# threads, f32), flashvision against torch's CPU SDPA in the same run, with wip/cpu-keysplit's
# CPU-only wheel (.devbin/cpu-keysplit/whl, built at fbf79ae). One wheel, the split chosen per run:
#   FLASHVISION_CPU_FWD_KEY_SPLIT=0     never split (main's forward at 74d5f53/aa4d63a)
#   FLASHVISION_CPU_FWD_KEY_SPLIT=1     always split (also sd15-self-32, vit-b16, sdxl-cross)
#   FLASHVISION_CPU_FWD_KEY_SPLIT=auto  the default: splits sd15-self-16 only
# then, sd15-self-16 alone, 96-row query blocks (FLASHVISION_CPU_FWD_BLOCKS=96,128) without and
# with the split. All alternated twice. Run from the repository root:
#   bash .devbin/cpu-keysplit/call.sh   (carry .devbin/cpu-keysplit)
# About 2.5-3.5 minutes (each run capped at 45 s). Results under $OUT.
set -u
O=${OUT:-/tmp/cpu-keysplit-py}
mkdir -p "$O"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_ks \
  .devbin/cpu-keysplit/whl/flashvision-*.whl > "$O/pip.log" 2>&1 || { cat "$O/pip.log"; exit 1; }
bench() {  # bench NAME SPLIT BLOCKS CASES...
  local name=$1 split=$2 blocks=$3
  shift 3
  (cd /tmp && FLASHVISION_CPU_FWD_KEY_SPLIT=$split FLASHVISION_CPU_FWD_BLOCKS=$blocks \
    PYTHONPATH=/tmp/site_ks timeout -k 5 45 python3 -u -m flashvision.bench --device cpu \
    --impl flashvision --impl torch-cpu-sdpa "$@" --budget 1.0 --json "$O/$name.json" \
    > "$O/$name.txt" 2>&1)
  echo "== $name (split=$split blocks=${blocks:-default}) rc=$?"
  grep -E "^(sd15|vit|sdxl|dit)" "$O/$name.txt" | grep flashvision | cut -c1-150
}
CASES=(--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --case sdxl-cross)
for r in 1 2; do
  for v in 0 1 auto; do bench "split$v-$r" $v "" "${CASES[@]}"; done
  bench "b96-split0-$r" 0 96,128 --case sd15-self-16
  bench "b96-split1-$r" 1 96,128 --case sd15-self-16
done
