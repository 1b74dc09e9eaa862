#!/bin/bash
D=.devbin/cpu5
exec > >(tee $OUT/log.txt) 2>&1
pip install -q --no-deps --target /tmp/fv $D/*.whl 2>&1 | grep -v WARNING
PYTHONPATH=/tmp/fv${PYTHONPATH:+:$PYTHONPATH} python3 $D/rows.py
