#!/usr/bin/env bash
# Session 10, call 6: wip/sm90-cross-tile3 (the cross-tile pipeline on every dense non-causal problem, run_blocks inside a tile), built on
# the development machine and carried: the whole GPU test binary in 8 shards, compute-sanitizer
# memcheck and racecheck on the sanitize suite and the new pipeline, then the cross-tile pipeline
# off and on in one binary (two interleaved rounds) on the shapes it applies to, with controls.
set -uo pipefail
O=/tmp/s10c6; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call6.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
B=/tmp/s10bin; mkdir -p $B; tar xJf .devbin/s10/bins.tar.xz -C $B; tar xJf .devbin/s10/cli-main.tar.xz -C $B; echo "unpacked ($(el))" | tee -a $S
pids=()
for i in $(seq 0 7); do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout -k 5 220 $B/flashvision_gpu_tests \
  > $O/t_$i.log 2>&1 & pids+=($!); done
wait "${pids[@]}"
echo "gpu tests ($(el)): passed $(grep -h '^\[  PASSED  \]' $O/t_*.log | awk '{s+=$4} END {print s+0}') failed $(grep -h '^\[  FAILED  \] [0-9]' $O/t_*.log | awk '{s+=$3} END {print s+0}') skipped $(grep -h '^\[  SKIPPED \] [0-9]' $O/t_*.log | awk '{s+=$4} END {print s+0}') unfinished $(grep -L '^\[==========\] [0-9]* tests* from .* ran' $O/t_*.log | wc -l)" | tee -a $S
grep -h "^\[  FAILED  \] [A-Z]" $O/t_*.log | sort -u | head | tee -a $S
grep -h "^\[       OK \] .*CrossTile" $O/t_*.log | tr '\n' ';' | head -c 1200 | tee -a $S; echo | tee -a $S
timeout -k 5 130 compute-sanitizer --tool memcheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='*GpuSanitize*:Cuda/GpuSm90CrossTile.ManyTilesPerCta/bf16' > $O/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.log | tail -1) $(grep -c '^\[       OK \]' $O/memcheck.log) ok ($(el))" | tee -a $S
timeout -k 5 90 compute-sanitizer --tool racecheck --error-exitcode 9 $B/flashvision_gpu_tests \
  --gtest_filter='Cuda/GpuSm90CrossTile.GroupedHeadsAndStrides/bf16' > $O/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $O/racecheck.log | tail -1) ($(el))" | tee -a $S
AB="--case vit-b16-224 --case vit-l14-336 --case vit-h14-224 --case dit-xl2-512 --case sd15-self-64 --case sd15-self-32 --case sdxl-self-128 --case sd15-cross-64 --case sdxl-cross --case flux-1024 --case sweep-d64-n4096 --case sweep-d128-n4096 --case sweep-d256-n4096 --case video-49f-720p"
for r in 1 2; do for v in main 0 auto; do
  bin=$B/flashvision; mode=$v; [ $v = main ] && { bin=$B/flashvision-main; mode=auto; }
  FLASHVISION_SM90_FWD_CROSS_TILE=$mode timeout -k 5 60 $bin bench --device cuda --no-naive --budget 0.25 $AB \
    --json $O/ct-$v-$r.json > $O/ct-$v-$r.log 2>&1
  echo "cross tile $v round $r rc=$? ($(el))" | tee -a $S
done; done
python3 - $O <<'PY' | tee -a $S
import json, sys, glob, os
out = sys.argv[1]; t = {}
for path in sorted(glob.glob(os.path.join(out, "ct-*.json"))):
    mode, rnd = os.path.basename(path)[3:-5].rsplit("-", 1)
    for r in json.load(open(path))["records"]:
        if r.get("impl") == "flashvision":
            key = r["case"] if r["case"] != "custom" else f'{r["B"]}x{r["H"]}x{r["Nq"]}x{r["Nk"]}x{r["D"]}'
            t.setdefault(key, {})[(mode, rnd)] = (r.get("tflops"), r.get("ms"), r.get("max_err"))
cols = [(m, r) for r in "12" for m in ("main", "0", "auto")]
print("TFLOP/s".ljust(22) + "".join(f"{m}/{r}".rjust(11) for m, r in cols) + "   auto/0  auto/main (best of two)")
for k, row in t.items():
    cells = "".join((f"{row[c][0]:.1f}" if c in row and row[c][0] else "-").rjust(11) for c in cols)
    best = lambda m: max([row[(m, r)][0] for r in "12" if (m, r) in row and row[(m, r)][0]] or [0])
    ratio = lambda a, b: f"{best(a) / best(b):.3f}" if best(b) else "-"
    print(k[:22].ljust(22) + cells + f"   {ratio('auto', '0')}  {ratio('auto', 'main')}  err {row.get(('auto','1'), (0,0,None))[2]}")
PY
echo "done ($(el))" | tee -a $S
