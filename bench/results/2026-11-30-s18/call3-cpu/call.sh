#!/usr/bin/env bash
# Session 18, device call 3: the CPU forward on the H200 machine's Xeon: every BENCH.md case in
# bf16 against torch's CPU SDPA with the candidate main, then main (base) and the candidate
# alternated by process on the cases the AMX change targets.
set -uo pipefail
exec > >(tee "$OUT/log.txt") 2>&1
R=/tmp/res; mkdir -p $R
save() { tar czf "$OUT/results.tgz" -C $R . ; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s]"; }
for k in base cand; do tar xJf .devbin/s18/kit-$k.tar.xz -C /tmp || exit 1; done
for k in base cand; do
  mkdir -p /tmp/pkg-$k && cp -r python/flashvision /tmp/pkg-$k/ && cp /tmp/kit-$k/python/_C*.so /tmp/pkg-$k/flashvision/
done
export PYTHONUNBUFFERED=1
use() { export PYTHONPATH=/tmp/pkg-$1 LD_LIBRARY_PATH=/tmp/kit-$1; }
lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"
use cand
timeout -k 5 300 python3 -m flashvision.bench --device cpu --dtype bf16 --budget 0.3 --json $R/cand-all-cpu.json > $R/cand-all-cpu.txt 2>&1; echo "all-cpu rc=$?"
grep -E "flashvision |geometric" $R/cand-all-cpu.txt
echo "$(el) full run done"; save
CPU="--case vae-mid-512 --case sd15-self-16 --case flux-1024 --case sd15-self-32"
n=0
for k in base cand cand base base cand; do
  n=$((n+1)); use $k
  timeout -k 5 45 python3 -m flashvision.bench --device cpu --dtype bf16 $CPU --budget 0.3 --json $R/cpu-ab-$n-$k.json > $R/cpu-ab-$n-$k.txt 2>&1
  echo "== cpu ab $n $k rc=$?"; grep -E "flashvision " $R/cpu-ab-$n-$k.txt | awk '{print $1, $4, $5, $9}' | paste -sd' '
done
echo "$(el) CPU A/B done"; save
for k in base cand cand base; do
  n=$((n+1)); use $k
  timeout -k 5 40 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --cuda-graphs --budget 0.2 \
    --case sd15-self-16 --case sd15-self-32 --case sweep-d256-n1024 --json $R/sm80-$n-$k.json > $R/sm80-$n-$k.txt 2>&1
  echo "== sm80 $n $k rc=$?"; grep -E "flashvision |sdpa-flash " $R/sm80-$n-$k.txt | awk '{print $1, $2, $4, $5}' | paste -sd' '
done
echo "$(el) all done"; save
