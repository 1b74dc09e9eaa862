#!/usr/bin/env bash
# Session 20, device call 15: branch wip/sm90-keep-p-live (kit keep: P's A fragments read after
# the wait for P V): where the wait for P V sits in the SASS of the D = 128 and D = 64 wide
# kernels, the sm90 forward GPU tests, then main against keep on six cases (processes main keep
# keep main). Everything but log.txt goes into results.tgz.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res15; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in main keep; do
  tar xJf .devbin/s20/kit-$k.tar.xz -C /tmp || exit 1
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
cuobjdump -sass /tmp/kit-keep/libflashvision.so.0.1.0 > /tmp/keep.sass 2>/dev/null
for pat in 'fwd_kernelI13__nv_bfloat16Li128ELi128ELi176ELb0E' 'fwd_kernelI13__nv_bfloat16Li64ELi192ELi128ELb0E'; do
  awk -v p="$pat" '/Function :/ {on = index($0, p) > 0} on' /tmp/keep.sass > "$R/$pat.sass"
  echo "== $pat: DEPBAR, SHFL and the first MUFU.EX2 after each DEPBAR, in order"
  grep -nE "DEPBAR|SHFL.BFLY|MUFU.EX2" "$R/$pat.sass" | awk '/DEPBAR/ {print; n=0; next} n < 2 {print; n++}' | sed -E 's/ +/ /g' | cut -c1-70
done
gzip -9 $R/*.sass
echo "$(el) sass done"; save
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
use keep
shards=8; pids=()
for i in $(seq 0 $((shards - 1))); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout -k 5 60 /tmp/kit-keep/bin/flashvision_gpu_tests --gtest_filter='*Sm90*:*Split*:*CrossTile*:*Features*' >/tmp/shard$i.txt 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "shard rc=$?"; done
cat /tmp/shard*.txt | gzip > $R/gtests-gpu.txt.gz
echo "== GPU gtests (sm90, split, cross-tile, features)"; grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED" /tmp/shard*.txt | awk '{print $1,$2,$3}' | sort | uniq -c; grep -h "^\[  PASSED" /tmp/shard*.txt | awk '{s+=$4} END {print "passed", s}'
grep -h "^\[  FAILED" /tmp/shard*.txt | sort -u | head -10
echo "$(el) tests done"; save
CASES="--case sweep-d64-n4096 --case sweep-d128-n1024 --case sweep-d128-n4096 --case sdxl-self-128 --case vit-b16-224 --case flux-1024"
n=0
for k in main keep keep main; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --impl flashvision --cuda-graphs --budget 0.15 $CASES \
    --json $R/ab-$n-$k.json > $R/ab-$n-$k.txt 2>&1; echo "== ab run $n $k rc=$?"
  grep -E "flashvision " $R/ab-$n-$k.txt | awk '{print $1, $4, $5}' | paste -sd' '
  save
done
echo "$(el) all done"; save
