#!/usr/bin/env bash
# Session 20, device call 14: the SASS of main's sm90 forward kernels at D = 128 (176-key tiles)
# and D = 64 (wide tile), from kit main's libflashvision.so, for reading where the consumers'
# fixed-latency waits sit (call 11). Everything goes into $OUT.
set -uo pipefail
tar xJf .devbin/s20/kit-main.tar.xz -C /tmp || exit 1
cuobjdump -sass /tmp/kit-main/libflashvision.so.0.1.0 > /tmp/all.sass 2>/dev/null
echo "functions: $(grep -c 'Function :' /tmp/all.sass)"
grep 'Function :' /tmp/all.sass | grep fwd_kernel | head -40
for pat in 'fwd_kernelI13__nv_bfloat16Li128ELi128ELi176ELb0E' 'fwd_kernelI13__nv_bfloat16Li64ELi192ELi128ELb0E'; do
  awk -v p="$pat" '/Function :/ {on = index($0, p) > 0} on' /tmp/all.sass > "$OUT/$pat.sass"
  echo "$pat: $(wc -l < "$OUT/$pat.sass") lines"
done
gzip -9 "$OUT"/*.sass
