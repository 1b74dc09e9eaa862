#!/bin/bash
exec > >(tee $OUT/log.txt) 2>&1
for dp in 512 128 64; do OMP_PROC_BIND=close OMP_PLACES=cores timeout 100 .devbin/s12b/amxprobe $dp; done
