#!/bin/bash
# Session 14 call A (prepared at the end of session 13): branch wip/sm90-text-width's package and
# GPU tests (built on the development machine, head dims 32-512 but 96-192, sm_90a).
# (1) sdxl-cross kernel by kernel and in the Python bench with the text width off (0) and on
# (auto), alternated, in separate processes; (2) the text-width and D = 512 backward tests.
# Jobs are waited for by pid: a bare `wait` also waits for the tee below and never returns.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$D/pkg${PYTHONPATH:+:$PYTHONPATH}
for mode in 0 auto 0 auto; do
  echo "== FLASHVISION_SM90_FWD_TEXT=$mode"
  FLASHVISION_SM90_FWD_TEXT=$mode timeout -k 5 60 python3 $D/cross_profile.py sdxl-cross 2>&1 | grep -v Warn
  FLASHVISION_SM90_FWD_TEXT=$mode timeout -k 5 60 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-cudnn --budget 0.3 --case sdxl-cross --json $OUT/cross-$mode-$RANDOM.json 2>&1 | grep -E "^sdxl"
done
echo "== GPU tests"
OMP_NUM_THREADS=16 timeout -k 5 240 $D/flashvision_gpu_tests --gtest_filter='*Sm90KeyBlock*:*Sm90CrossTile*:*GpuBwdHeadDim512*' --gtest_brief=1 > $OUT/tests.txt 2>&1
echo "rc=$?"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \] [0-9]" $OUT/tests.txt
