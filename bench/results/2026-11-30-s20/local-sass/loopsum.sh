#!/bin/bash
# loopsum.sh FILE.sass : from the first "DEPBAR.LE gsb0, 0x1" on, the order of waits, shuffles, exps, conversions, try-waits (collapsed)
awk '/DEPBAR.LE gsb0, 0x1/ {on=1} on' "$1" | grep -oE "WARPGROUP.DEPBAR.LE gsb0, 0x[01]|SHFL.BFLY|MUFU.EX2|F2FP.BF16.F32.PACK_AB|SYNCS.PHASECHK.TRANS64.TRYWAIT|HGMMA" | sed 's/WARPGROUP.DEPBAR.LE gsb0, /WAIT/' | awk 'BEGIN{p=""} {if ($0==p) {c++; next} if (p!="") printf "%s x%d | ", p, c; p=$0; c=1} END{printf "%s x%d\n", p, c}' | cut -c1-300
