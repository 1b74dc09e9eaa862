#!/bin/bash
CO=/tmp/nvdis/x/nvidia/cu13/bin/cuobjdump
SRC=${SRC:-/work/main}
cd /tmp
list="$@"
for f in $list; do rm -f /tmp/ac_$f.cubin; /usr/local/cuda/bin/nvcc -I$SRC/include -I$SRC/src -I/tmp/kit-full/src/cuda/generated -O3 -DNDEBUG -arch=sm_90a -std=c++20 -cubin -Xptxas -v -x cu /tmp/kit-full/src/cuda/generated/sm90_fwd_bf16_$f.cu -o /tmp/ac_$f.cubin > /tmp/ac_$f.log 2>&1 & n=$((n+1)); if [ $((n % 2)) = 0 ]; then wait; fi; done; wait
for f in $list; do
  echo "$f: $(grep -E "spill|C75|error" /tmp/ac_$f.log | sort -u | tr -s ' ' | tr '\n' ';')"
  $CO -sass /tmp/ac_$f.cubin > /tmp/ac_$f.all.sass
  for fn in $(grep "Function :" /tmp/ac_$f.all.sass | awk '{print $3}'); do
    awk -v p="$fn" '/Function :/ {on = index($0, p) > 0} on' /tmp/ac_$f.all.sass > /tmp/one.sass
    echo "  ${fn:40:42}: $(grep -c DEPBAR /tmp/one.sass) waits; $(/tmp/loopsum.sh /tmp/one.sass | cut -c1-130)"
  done
done
