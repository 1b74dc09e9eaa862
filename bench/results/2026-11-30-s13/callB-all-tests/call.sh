#!/bin/bash
# Session 13 call B: the whole GPU test binary of branch wip/sm80-bwd-swizzle + the sm90 text
# width (head dims 32-512 but 96/160/192, sm_90a) in 8 parallel shards; memcheck on the text
# tests; the Python bench of the branch's wheel: the cross cases against cuDNN and FA2 (three
# runs), the sm80 kernels against FA2 at D = 64 (two more runs); the cross cases kernel by kernel.
D=.devbin/s13
exec > >(tee $OUT/log.txt) 2>&1
echo "== GPU tests, 8 shards"
mkdir -p /tmp/t
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 400 $D/flashvision_gpu_tests > /tmp/t/t_$i.log 2>&1 &
done
wait
for i in 0 1 2 3 4 5 6 7; do echo "shard $i: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test' /tmp/t/t_$i.log | tr '\n' ' ')"; done
grep -h "^\[  FAILED  \] Cuda\|^\[  FAILED  \] [A-Z]" /tmp/t/t_*.log | sort | uniq | head -40
grep -h -B2 "^\[  FAILED  \]" /tmp/t/t_*.log | grep -v "^\[" | grep -iv "bucket" | head -20
tar czf $OUT/tests.tgz -C /tmp/t .
echo "== memcheck on the text width and the backward options"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $D/flashvision_gpu_tests --gtest_filter='*GpuSm90KeyBlocks.TextTokens*:*GpuBwdTileVariants*' --gtest_brief=1 2>&1 | tail -3
export PYTHONPATH=$PWD/$D/pkg${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import flashvision, flashvision._C as c; print(flashvision.__file__)"

echo "== cross cases kernel by kernel"
timeout 100 python3 $D/cross_profile.py sdxl-cross sd15-cross-64
for run in 1 2 3; do
  echo "== Python bench, image cases, forward, run $run"
  timeout 150 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --budget 0.3 --case sdxl-cross --case sd15-cross-64 --case vit-b16-224 --case sdxl-self-128 --json $OUT/fwd-$run.json > /tmp/f.txt 2>&1
  grep -E "^(sdxl|sd15|vit)" /tmp/f.txt
done
for run in 2 3; do
  echo "== Python bench, sm80 against FA2, fwd+bwd, run $run"
  timeout 150 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --backward --budget 0.3 --case sweep-d64-n4096 --case sweep-d64-n16384 --case sdxl-self-128 --json $OUT/sm80-fa2-$run.json > /tmp/p.txt 2>&1
  grep -E "fwd\+bwd" /tmp/p.txt
done
