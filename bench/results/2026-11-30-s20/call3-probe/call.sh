OMP_PROC_BIND=close OMP_PLACES=cores timeout 120 .devbin/s20/amxprobe4 2>&1 | tee $OUT/amxprobe4.txt   # amxprobe4 built from call3-probe/amxprobe4.cpp
