"""Prints the cases `python -m flashvision.bench` runs, one "name BxHxNqxNkxD what" line each.

Loads flashvision/bench/cases.py from the file given (no flashvision build needed), so that a CPU
build's ctest can hold its table against `flashvision bench --list` (check_case_list.cmake).
"""

import importlib.util
import sys

spec = importlib.util.spec_from_file_location("flashvision_bench_cases", sys.argv[1])
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)
for case in cases.CASES.values():
    print(f"{case.name} {case.B}x{case.H}x{case.Nq}x{case.Nk}x{case.D} {case.what}")
