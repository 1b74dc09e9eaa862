#!/usr/bin/env bash
# Session 6, call 6: (a) branch wip/sm90-tail-split (the last wave's tiles split over the keys):
# its sm90 suites and the forward with the split off and automatic, two rounds (the helper's
# call.sh); (b) the CPU forward with resident K/V and huge-page outputs against main's, three
# rounds through the CLI; (c) the forward's GEMMs alone at more tile shapes.
set -uo pipefail
O=/tmp/o6; mkdir -p $O; S=$OUT/summary.txt
trap 'tar czf $OUT/call6.tgz -C $O . 2>/dev/null' EXIT
t0=$(date +%s); el() { echo "$(( $(date +%s)-t0 ))s"; }
OUT=$O/tail bash .devbin/sm90-tail/call.sh > $O/tail.log 2>&1
cat $O/tail/summary.txt >> $S; echo "tail split done ($(el))" | tee -a $S
C="--case sd15-self-16 --case sd15-self-32 --case vit-h14-224 --case sdxl-self-128 --case dit-xl2-512 --case vit-b16-224 --case vit-l14-336"
for round in 1 2 3; do
  for v in old new; do
    if [ $v = old ]; then FV=.devbin/cpucli/flashvision; L=$(pwd)/.devbin/cpucli; else FV=.devbin/cpucli/flashvision.new; L=$(pwd)/.devbin/cpucli/libnew; fi
    LD_LIBRARY_PATH=$L timeout -k 5 90 $FV bench --device cpu --no-naive --budget 0.6 $C > $O/cpu_${v}_$round.txt 2>&1
    echo "cpu $v r$round: $(awk '$3=="flashvision" && $5=="fwd" {printf "%s %s  ", $1, $8}' $O/cpu_${v}_$round.txt)" | tee -a $S
  done
done
echo "cpu done ($(el))" | tee -a $S
for cfg in "128 384 128" "128 384 256" "128 192 128" "160 192 128" "160 96 64" "64 384 64" "256 192 128" "80 272 64"; do
  timeout -k 5 60 .devbin/s6/gv512 $cfg 2>&1 | head -3 | tee -a $S
done
echo "all done ($(el))" | tee -a $S
