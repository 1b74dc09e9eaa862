#!/bin/bash
# Session 14 call C (prepared in session 13): every BENCH.md case in one harness with the package
# of branch wip/sm90-text-width (full/pkg: head dims 48-512; its sm80 kernels are main's):
# (1) issue 3: the sm80 kernels for both passes against FA2, forward and fwd+bwd;
# (2) issue 5: the default kernels against FA2 and cuDNN, forward.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$D/full/pkg${PYTHONPATH:+:$PYTHONPATH}
echo "== sm80 against FA2, fwd and fwd+bwd"
timeout -k 5 280 python3 -m flashvision.bench --device cuda --kernel sm80 --impl flashvision --impl sdpa-flash --backward --budget 0.3 --json $OUT/sm80-all.json > $OUT/sm80-all.txt 2>&1
echo "rc=$?"; tail -4 $OUT/sm80-all.txt
echo "== default kernels against FA2 and cuDNN, forward"
timeout -k 5 250 python3 -m flashvision.bench --device cuda --impl flashvision --impl sdpa-flash --impl sdpa-cudnn --budget 0.3 --json $OUT/fwd-all.json > $OUT/fwd-all.txt 2>&1
echo "rc=$?"; tail -4 $OUT/fwd-all.txt
