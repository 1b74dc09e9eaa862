#!/bin/bash
# Issue 4 (CPU forward >= 1.5x torch's CPU SDPA): main at 82bbc13 against wip/cpu-small at b9aa434
# on the device's 16-core Xeon. Run from the repository root: bash .devbin/cpu-small/call.sh
# (carry .devbin/cpu-small). About 3-4 minutes. Results under $OUT (or /tmp/cpu-small-out).
set -u
D=.devbin/cpu-small
O=${OUT:-/tmp/cpu-small-out}
mkdir -p "$O"
lscpu > "$O/lscpu.txt"
CASES="--case sd15-self-16 --case sd15-self-32 --case vit-b16-224 --case sdxl-self-128"
# The ten image cases of BENCH.md as B,H,N,D or B,H,Nq,Nk,D, in the Python bench's [B, H, N, D]
# layout (the CLI's [B, N, H, D] rows never qualify for the branch's in-place K/V reads).
SHAPES="2,8,256,160 2,8,1024,80 256,12,197,64 64,16,577,64 128,16,257,80 2,8,4096,40
        2,8,4096,77,40 2,10,4096,64 2,10,4096,77,64 16,16,1024,72"
for r in 1 2; do
  for v in main branch; do
    $D/$v/flashvision bench --device cpu --no-naive --threads 16 --budget 1 $CASES \
      --json "$O/cli-$v-$r.json" > "$O/cli-$v-$r.txt" 2>&1
  done
done
for r in 1 2; do
  for v in main branch branch-packed; do
    $D/$v/cpu_fwd_time --threads 16 --seconds 1 $SHAPES > "$O/bhsd-$v-$r.txt" 2>&1
  done
  # The branch with main's query blocks (in place, but 3 and 5 tasks per thread).
  FLASHVISION_CPU_FWD_BLOCKS=96,128 $D/branch/cpu_fwd_time --threads 16 --seconds 1 2,8,256,160 \
    > "$O/bhsd-branch-main-blocks-$r.txt" 2>&1
  FLASHVISION_CPU_FWD_BLOCKS=192,128 $D/branch/cpu_fwd_time --threads 16 --seconds 1 2,8,1024,80 \
    >> "$O/bhsd-branch-main-blocks-$r.txt" 2>&1
done
$D/branch/cpu_fwd_phases --rounds 50 256,160,96,128 256,160,48,128 1024,80,192,128 \
  1024,80,96,128 257,80 > "$O/phases.txt" 2>&1
for f in "$O"/cli-*.txt; do echo "== $f"; grep -E "^(sd15|vit|sdxl)" "$f"; done
for f in "$O"/bhsd-*.txt; do echo "== $f"; cat "$f"; done
cat "$O/phases.txt"
