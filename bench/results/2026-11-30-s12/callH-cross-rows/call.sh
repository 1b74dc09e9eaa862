#!/bin/bash
# Session 12 call H: sdxl-cross (one key block a tile) on the 192-row tile the model picks against
# the 128-row tile with the cross-tile pipeline, alternated, main's CLI.
D=.devbin/s12g
exec > >(tee $OUT/log.txt) 2>&1
for r in 1 2 3; do
  for rows in auto 128; do
    e=""; [ $rows = 128 ] && e="FLASHVISION_SM90_FWD_ROWS=128"
    env $e timeout 60 $D/flashvision bench --device cuda --no-naive --budget 0.5 --case sdxl-cross --shape 2,10,1024,77,64 --shape 1,10,4096,77,64 --shape 4,10,4096,77,64 --json $OUT/$r-$rows.json > /tmp/x.txt 2>&1
    echo "-- run $r rows=$rows"; grep flashvision /tmp/x.txt | grep -v "^flashvision" | awk '{print $1, $2, $6, $7, $8}'
  done
done
tar czf $OUT/json.tgz -C $OUT $(cd $OUT; ls *.json) && rm -f $OUT/*.json
