#!/usr/bin/env bash
# Session 22, call 5: the wide-or-narrow row choice (FLASHVISION_SM90_FWD_ROWS) re-measured after
# the softmax without a per-score max, which changed the cost of a key block: main as landed
# (kit land, ac6a38f) on the cases where buckets 32-80 can take either tile, each process with
# the host's choice (auto: the variable unset), 128 rows or 192 rows forced, in three alternated rounds, 0.2 s a
# measurement; then the split of the last wave on or off (FLASHVISION_SM90_FWD_SPLIT) likewise.
# carry: [".devbin/s22/kit-land.tar.xz"]
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
tar xJf .devbin/s22/kit-land.tar.xz -C /tmp || exit 1
mkdir -p /tmp/pkg && cp -r python/flashvision /tmp/pkg/ && cp /tmp/kit-land/python/_C*.so /tmp/pkg/flashvision/
export PYTHONPATH=/tmp/pkg LD_LIBRARY_PATH=/tmp/kit-land PYTHONUNBUFFERED=1
cases="--case dit-xl2-512 --case sd15-self-64 --case sd15-self-32 --case sdxl-self-128 --case vit-h14-224 --case sweep-d64-n1024 --case sweep-d64-n4096 --case sweep-d64-n16384 --case vit-l14-336"
for round in 1 2 3; do
  for rows in auto 128 192; do
    if [ $rows = auto ]; then unset FLASHVISION_SM90_FWD_ROWS; else export FLASHVISION_SM90_FWD_ROWS=$rows; fi
    timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision \
      --cuda-graphs --budget 0.2 $cases --json $OUT/rows-$rows-$round.json > $OUT/rows-$rows-$round.txt 2>&1
    echo "== round $round rows $rows rc=$?"
    grep -E " flashvision " $OUT/rows-$rows-$round.txt | awk '{print $1, $4, $5}' | paste -sd' '
  done
done
# The last wave's split over the keys (FLASHVISION_SM90_FWD_SPLIT) on or off, the same way.
unset FLASHVISION_SM90_FWD_ROWS
cases="--case sd15-self-32 --case sd15-self-16 --case sd15-self-64 --case sdxl-self-128 --case vit-h14-224 --case dit-xl2-512 --case flux-1024 --case vae-mid-512"
for round in 1 2 3; do
  for split in auto 0; do
    FLASHVISION_SM90_FWD_SPLIT=$split timeout -k 5 100 python3 -m flashvision.bench --device cuda --impl flashvision \
      --cuda-graphs --budget 0.2 $cases --json $OUT/split-$split-$round.json > $OUT/split-$split-$round.txt 2>&1
    echo "== round $round split $split rc=$?"
    grep -E " flashvision " $OUT/split-$split-$round.txt | awk '{print $1, $4, $5}' | paste -sd' '
  done
done
