#!/bin/bash
# Session 14 call D: fwd+bwd time split on the small cases (bwd_profile.py), full/pkg.
D=.devbin/s14
exec > >(tee $OUT/log.txt) 2>&1
export PYTHONPATH=$PWD/$D/full/pkg${PYTHONPATH:+:$PYTHONPATH}
timeout -k 5 240 python3 $D/bwd_profile.py 2>&1 | grep -v -i warn
