#!/usr/bin/env bash
# sm80 backward last-wave split launched as a programmatic dependent (branch wip/sm80-bwd-tail-pdl),
# one device call from the repo root of /work/main with /work/helper-notes/sm80-bwd-tail-pdl copied
# to .devbin/sm80-bwd-tail-pdl (or BINS=path of bins.tar.xz): the tail-split tests (incl. the new
# EarlyStartOnAndOff and the PDL bad values) and the backward suites in 8 shards, compute-sanitizer
# memcheck on the tail tests, then the sm80 fwd+bwd bench with TAIL_SPLIT=0, auto + PDL=0 (main's
# behaviour), auto + PDL=1 (the new default), and 8 forced parts over the last wave plus one whole
# wave more (FLASHVISION_SM80_BWD_TAIL_WAVES=1) with PDL=1 and PDL=0, two interleaved rounds, one
# binary.
set -uo pipefail
O=/tmp/bwdpdl; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/bwdpdl.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=/tmp/bwdpdl-bin; mkdir -p $B; tar xJf ${BINS:-.devbin/sm80-bwd-tail-pdl/bins.tar.xz} -C $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
F='*BwdTail*:*GpuSplitBackward*:*BwdSplitPolicy*:*GpuBwd*:*GpuDeterministic*:*GpuWorkspace*:*GpuSweep*:*GpuSanitize*:*GpuSm90Backward*:*GpuVsCpu*:*GpuFeatures*'
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 130 $B/flashvision_gpu_tests \
  --gtest_filter="$F" > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
grep -h '^\[       OK \] .*BwdTailSplit' $O/t_*.log | sed 's/^\[ *OK *\] Cuda.GpuBwdTailSplit.//' | tr '\n' ';' | head -c 1500 | tee -a $S; echo | tee -a $S
timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuBwdTailSplit.EarlyStart*/bf16_sm80:Cuda/GpuBwdTailSplit.MixedGrids*/bf16_sm80:Cuda/GpuBwdTailSplit.Auto*/bf16_sm80' \
  > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) $(grep -c '^\[       OK \]' $O/memcheck.log) ok ($(el))" | tee -a $S
[ -n "${SKIP_BENCH:-}" ] && exit 0
C="--case sweep-d64-n4096 --case sweep-d64-n16384 --case sweep-d128-n4096 --case flux-1024"
for round in 1 2; do
  for mode in 0:1:0 auto:0:0 auto:1:0 8:1:1; do
    IFS=: read -r split pdl waves <<< "$mode"; tag=${split}-pdl${pdl}-w${waves}
    FLASHVISION_SM80_BWD_TAIL_SPLIT=$split FLASHVISION_SM80_BWD_TAIL_PDL=$pdl FLASHVISION_SM80_BWD_TAIL_WAVES=$waves \
      timeout -k 5 60 $B/flashvision bench \
      --device cuda --kernel sm80 --backward --backward-kernel sm80 --no-naive --budget 0.3 $C \
      --json $O/bench_${tag}_$round.json > $O/bench_${tag}_$round.log 2>&1
    echo "bench TAIL_SPLIT=$split PDL=$pdl WAVES=$waves round $round rc=$? ($(el))" | tee -a $S
  done
done
python3 - $O <<'PY' | tee -a $S
import json, sys, glob, os
out = sys.argv[1]
modes = ("0-pdl1-w0", "auto-pdl0-w0", "auto-pdl1-w0", "8-pdl1-w1", "8-pdl0-w1")
table = {}
for path in sorted(glob.glob(os.path.join(out, "bench_*_*.json"))):
    mode, rnd = os.path.basename(path)[6:-5].rsplit("_", 1)
    for r in json.load(open(path))["records"]:
        if r.get("impl") == "flashvision" and r.get("pass") == "fwd+bwd":
            table.setdefault(r["case"], {})[(mode, rnd)] = (r.get("tflops"), r.get("max_err"))
cols = [(m, r) for r in ("1", "2") for m in modes]
print("columns: split-pdl-waves/round; ratios of the best of two rounds to split 0")
print("fwd+bwd TFLOP/s".ljust(18) + "".join(f"{m}/{r}".rjust(16) for m, r in cols)
      + "  auto-pdl0 auto-pdl1 w1-pdl1 w1-pdl0  max_err per mode (round 1)")
for case, row in table.items():
    cells = "".join((f"{row[c][0]:.1f}" if c in row and row[c][0] else "-").rjust(16) for c in cols)
    def best(m):
        v = [row[(m, r)][0] for r in ("1", "2") if (m, r) in row and row[(m, r)][0]]
        return max(v) if v else None
    bests = [best(m) for m in modes]
    ratio = lambda x, y: f"{x / y:.3f}" if x and y else "-"
    errs = "/".join(f"{row[(m, '1')][1]:.1e}" if (m, "1") in row and row[(m, "1")][1] is not None else "-"
                    for m in modes)
    ratios = " ".join(f"{ratio(b, bests[0]):>9}" for b in bests[1:])
    print(case.ljust(18) + cells + f"  {ratios}  {errs}")
PY
echo "done ($(el))" | tee -a $S
