#!/usr/bin/env bash
# Session 10, call 4 (final): every BENCH.md case with the automatic kernels (forward and
# fwd+bwd) next to SDPA's FA2 and cuDNN in the same call, the sm80 kernels alone on every case,
# then the CPU forward (main's CPU-only cp312 wheel) against torch's CPU SDPA on the ten CPU image
# cases in bf16, three runs.
set -uo pipefail
R=$(pwd); O=/tmp/s10c4; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call4.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=/tmp/s10bin; mkdir -p $B; tar xJf .devbin/s10/bins.tar.xz -C $B; echo "unpacked ($(el))" | tee -a $S
timeout -k 5 110 $B/flashvision bench --device cuda --backward --no-naive --budget 0.2 --case all \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 110 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive \
  --budget 0.2 --case all --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.2 --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_s10 .devbin/s10/whl/*.whl || exit 1
CASES="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case sd15-self-64 --case sd15-cross-64 --case sd15-self-32 --case sd15-self-16 --case sdxl-self-128 --case sdxl-cross --case dit-xl2-512"
bench() {  # NAME DTYPE
  (cd /tmp && FV_COMMIT=$(cat $R/.devbin/s10/whl/commit.txt) PYTHONPATH=/tmp/site_s10 timeout -k 5 80 python3 -u -m flashvision.bench --device cpu \
    --dtype $2 --impl flashvision --impl torch-cpu-sdpa $CASES --rounds 5 --budget 0.8 --json $O/$1.json > $O/$1.txt 2>&1)
  echo "== $1 rc=$? ($(el))" | tee -a $S
}
bench bf16-1 bf16; bench bf16-2 bf16; bench bf16-3 bf16
(cd /tmp && PYTHONPATH=/tmp/site_s10 python3 $R/.devbin/s9b/summarize.py $O/bf16-*.json) | tee -a $S
echo "done ($(el))" | tee -a $S
