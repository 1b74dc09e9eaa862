#!/usr/bin/env bash
# Session 5, call 5: main at 6d80fde (the D=80 wide forward tile, the sm80 tile variants and
# two-pass dQ, the dispatch message) — the whole GPU test binary in 8 shards, compute-sanitizer
# on the sanitize suite, then the CLI on both kernels' cases next to SDPA's FA2 and cuDNN
# (sdpa_peers.py) in the same call, and the Python bench again on the short fwd+bwd cases.
set -uo pipefail
O=/tmp/o5; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call5.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=.devbin/final
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 240 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
timeout -k 5 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests --gtest_filter='*GpuSanitize*:*WideTiles.SeveralTilesPerCta*' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) ($(el))" | tee -a $S
timeout -k 5 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSanitize.VarlenTorchLayout/*:Cuda/GpuSanitize.DenseCausalGqa/*' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
C80="--case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n1024 --case sweep-d256-n4096 --case sweep-d256-n16384 --case sdxl-self-128 --case flux-1024 --case vit-b16-224 --case dit-xl2-512"
timeout -k 5 120 $B/flashvision bench --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.3 $C80 \
  --json $O/sm80.json > $O/sm80.log 2>&1; echo "cli sm80 rc=$? ($(el))" | tee -a $S
CA="$C80 --case vit-h14-224 --case vit-l14-336 --case sd15-self-64 --case sd15-self-32 --case flux-2048"
timeout -k 5 120 $B/flashvision bench --device cuda --backward --no-naive --budget 0.3 $CA \
  --json $O/auto.json > $O/auto.log 2>&1; echo "cli auto rc=$? ($(el))" | tee -a $S
timeout -k 5 150 python3 .devbin/sdpa_peers.py --backward --budget 0.3 --impl sdpa-flash --impl sdpa-cudnn \
  $(echo $CA | sed 's/--case /--case=/g') --json $O/peers.json > $O/peers.log 2>&1; echo "peers rc=$? ($(el))" | tee -a $S
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/flashvision-*.whl > $O/pip.log 2>&1
PYTHONPATH=/tmp/site timeout -k 5 90 python3 -m flashvision.bench --device cuda --backward --budget 0.1 \
  --case sd15-self-32 --case sd15-self-16 --case sd15-cross-64 --impl flashvision --impl sdpa-flash --impl sdpa-cudnn \
  --json $O/py_short.json > $O/py_short.txt 2>&1; echo "py short rc=$? ($(el))" | tee -a $S
grep "fwd+bwd" $O/py_short.txt | tee -a $S
for x in .devbin/s5/helper-*.sh; do [ -f "$x" ] || continue
  timeout -k 5 200 bash "$x" $O >> $S 2>&1; echo "$x rc=$? ($(el))" | tee -a $S; done
