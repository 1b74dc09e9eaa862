#!/usr/bin/env bash
# One call on the GPU machine: build (Release, sm_90 only), GPU tests, compute-sanitizer on a small
# subset, `flashvision bench --device cuda` on the BENCH.md cases, the Python package (CUDA build)
# with its test suite, and the PyTorch SDPA peers on the same cases (`python3 -m flashvision.bench`
# restricted to the sdpa-* implementations).
# Logs and JSON go to $OUT (default /tmp/fv-gpu-check-out), 8 files at most: build.log, tests.log,
# sanitizer.log, bench.log, bench_flashvision.json, bench_peers.json, python.log, summary.txt.
# A short table is printed last.
#
# Environment: FV_STAGES (default "build tests sanitizer bench python peers"), FV_BUILD_DIR,
# FV_JOBS, FV_HEAD_DIMS (restrict buckets of the main build), FV_BENCH_CASES / FV_PEER_CASES
# (space-separated case names; default all), FV_BENCH_BUDGET / FV_PEER_BUDGET (seconds per
# measurement), FV_PEER_IMPLS (default "sdpa-flash sdpa-cudnn", with "flashvision" first when the
# python stage's CUDA package is there), FV_PY_HEAD_DIMS (buckets of the
# Python build; default those tests/python needs), FV_CPU_TESTS=1 to also run ctest -L cpu.
# Every stage has a timeout (FV_*_TIMEOUT). All stages together can pass a 10-minute limit per
# command: then run them in calls that keep the machine (and $FV_BUILD_DIR) warm, e.g.
# FV_STAGES="build tests sanitizer", then "python", then "bench peers" (the table needs both).
# Stages run in the default order whatever the order in FV_STAGES. The peers stage runs
# `python3 -m flashvision.bench`, so it needs the flashvision package (with only sdpa-* impls it
# runs none of flashvision's kernels): it uses the python stage's install in /tmp/fv-python when
# there is one (python runs before peers; a warm machine keeps it between calls), and otherwise
# first installs a CPU-only build into /tmp/fv-peers-python (a minute or two; build cached).
# Googletest: the system's, else sources in .gpu-deps/googletest (carried by the device tool).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/fv-gpu-check-out}
mkdir -p "$OUT"
BUILD=${FV_BUILD_DIR:-/tmp/fv-build}
JOBS=${FV_JOBS:-16}
STAGES=${FV_STAGES:-build tests sanitizer bench python peers}
pysite=/tmp/fv-python  # the python stage's install of the package (CUDA build)
export PATH=/usr/local/cuda/bin:$PATH
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start))s; }

note "== gpu-check $(date -u +%FT%TZ) commit=$(git rev-parse --short HEAD 2>/dev/null || echo none) stages: $STAGES"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$summary"

if has_stage build; then
  gtest_args=()
  if [ ! -e /usr/lib/x86_64-linux-gnu/cmake/GTest ] && [ ! -e /usr/local/lib/cmake/GTest ] \
      && [ -d .gpu-deps/googletest ]; then
    { cmake -S .gpu-deps/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/tmp/gtest -DBUILD_GMOCK=OFF \
      && cmake --build /tmp/gtest-build -j"$JOBS" && cmake --install /tmp/gtest-build; } \
      >"$OUT/build.log" 2>&1
    gtest_args=(-DCMAKE_PREFIX_PATH=/tmp/gtest)
  fi
  dims_args=()
  [ -n "${FV_HEAD_DIMS:-}" ] && dims_args=(-DFLASHVISION_HEAD_DIMS="$FV_HEAD_DIMS")
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHVISION_CUDA=ON \
    -DFLASHVISION_CUDA_ARCHS=90 "${dims_args[@]}" "${gtest_args[@]}" >>"$OUT/build.log" 2>&1
  # -k 0: a broken tool or CPU test must not stop the library and GPU tests from building.
  cmake --build "$BUILD" -j"$JOBS" -- -k 0 >>"$OUT/build.log" 2>&1
  build_rc=$?
  grep -E "spill|error|C75" "$OUT/build.log" | grep -v " 0 bytes spill" | head -20 >>"$summary"
  note "build rc=$build_rc ($(elapsed))"
  # The Hopper kernels must use wgmma (HGMMA in SASS); 0 means they were not built for sm_90a.
  lib=$(find "$BUILD" -maxdepth 1 -name 'libflashvision.so*' -type f | head -1)
  [ -n "$lib" ] && note "HGMMA instructions in $(basename "$lib"): $(cuobjdump -sass "$lib" 2>/dev/null | grep -c HGMMA)"
fi

if has_stage tests; then
  (cd "$BUILD" && timeout "${FV_TEST_TIMEOUT:-300}" ctest -L gpu -j12 --timeout 240 \
    --output-on-failure) >"$OUT/tests.log" 2>&1
  note "ctest -L gpu rc=$? : $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -1) ($(elapsed))"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout|SEGFAULT|Exception)" "$OUT/tests.log" | head -30 >>"$summary"
  if [ "${FV_CPU_TESTS:-0}" = 1 ]; then
    (cd "$BUILD" && timeout 240 ctest -L cpu -j16 --timeout 200) >>"$OUT/tests.log" 2>&1
    note "ctest -L cpu rc=$? : $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -1)"
  fi
fi

if has_stage sanitizer; then
  for tool in memcheck racecheck; do
    timeout "${FV_SANITIZER_TIMEOUT:-90}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$BUILD/bin/flashvision_gpu_tests" --gtest_filter='*GpuSanitize*' >>"$OUT/sanitizer.log" 2>&1
    note "compute-sanitizer $tool rc=$? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1) ($(elapsed))"
  done
fi

if has_stage bench; then
  cli=$BUILD/bin/flashvision
  cases=()
  for c in ${FV_BENCH_CASES:-all}; do cases+=(--case "$c"); done
  "$cli" info >"$OUT/bench.log" 2>&1
  # rc 1 also when a record failed (an unsupported head dim such as vae-mid-512's 512, or an error
  # over tolerance): the summary lists them.
  timeout "${FV_BENCH_TIMEOUT:-420}" "$cli" bench --device cuda "${cases[@]}" --backward \
    --budget "${FV_BENCH_BUDGET:-0.3}" --json "$OUT/bench_flashvision.json" >>"$OUT/bench.log" 2>&1
  note "flashvision bench rc=$? ($(elapsed))"
fi

if has_stage python; then
  # A CUDA build of the package into its own folder (the system site stays as it is), with the
  # head-dim buckets the CUDA tests use: 40 (bucket 48), 64, 80, 128 and 256.
  rm -rf "$pysite"
  FLASHVISION_CUDA=ON CMAKE_BUILD_PARALLEL_LEVEL=$JOBS timeout "${FV_PY_BUILD_TIMEOUT:-420}" \
    python3 -m pip install --no-build-isolation --no-deps --target "$pysite" . \
    -Ccmake.define.FLASHVISION_CUDA_ARCHS=90 \
    -Ccmake.define.FLASHVISION_HEAD_DIMS="${FV_PY_HEAD_DIMS:-48;64;80;128;256}" \
    -Cbuild-dir=/tmp/fv-python-build >"$OUT/python.log" 2>&1
  note "python package build rc=$? ($(elapsed))"
  PYTHONPATH=$pysite timeout "${FV_PY_TEST_TIMEOUT:-300}" python3 -m pytest tests/python -q -x \
    -p no:cacheprovider >>"$OUT/python.log" 2>&1
  note "pytest tests/python rc=$? : $(grep -E '(passed|failed|error|skipped)' "$OUT/python.log" | tail -1) ($(elapsed))"
fi

if has_stage peers; then
  peersite=$pysite
  if [ ! -d "$pysite/flashvision" ]; then
    peersite=/tmp/fv-peers-python
    rm -rf "$peersite"
    FLASHVISION_CUDA=OFF CMAKE_BUILD_PARALLEL_LEVEL=$JOBS timeout "${FV_PY_BUILD_TIMEOUT:-420}" \
      python3 -m pip install --no-build-isolation --no-deps --target "$peersite" . \
      -Cbuild-dir=/tmp/fv-peers-python-build >>"$OUT/bench.log" 2>&1
    note "peers: CPU-only package build rc=$? ($(elapsed))"
  fi
  cases=()
  for c in ${FV_PEER_CASES:-all}; do cases+=(--case "$c"); done
  # With the CUDA package, flashvision is timed by the same harness as the peers: the table's
  # ratios use that figure (the CLI's can differ by 5 %, docs/benchmarks.md).
  default_impls="sdpa-flash sdpa-cudnn"
  [ "$peersite" = "$pysite" ] && default_impls="flashvision $default_impls"
  impls=()
  for i in ${FV_PEER_IMPLS:-$default_impls}; do impls+=(--impl "$i"); done
  # The SM clock and board power of every timing: long calls run at the H200's power limit.
  telemetry=()
  command -v nvidia-smi >/dev/null && telemetry=(--telemetry)
  PYTHONPATH=$peersite PYTHONUNBUFFERED=1 timeout "${FV_PEER_TIMEOUT:-300}" \
    python3 -m flashvision.bench --device cuda --backward --budget "${FV_PEER_BUDGET:-0.3}" \
    --json "$OUT/bench_peers.json" "${cases[@]}" "${impls[@]}" "${telemetry[@]}" \
    >>"$OUT/bench.log" 2>&1
  note "peers (python -m flashvision.bench) rc=$? ($(elapsed))"
fi

# Short table: TFLOP/s per case and pass, flashvision against the peers of the same run.
if [ -e "$OUT/bench_flashvision.json" ] || [ -e "$OUT/bench_peers.json" ]; then
python3 - "$OUT/bench_flashvision.json" "$OUT/bench_peers.json" <<'PY' | tee -a "$summary"
import json, sys

def records(path):
    try:
        return json.load(open(path))["records"]
    except Exception as exc:
        print(f"(no records from {path}: {exc})")
        return []

fv, peers = records(sys.argv[1]), records(sys.argv[2])
table, keys = {}, []

def put(case, pass_, column, value):
    if (case, pass_) not in table:
        table[(case, pass_)] = {}
        keys.append((case, pass_))
    table[(case, pass_)][column] = value

# The CLI times "fwd" and "fwd+bwd"; its naive is the GPU naive path (S in memory, bf16 GEMMs).
for r in fv:
    column = "flashvision" if r["impl"] == "flashvision" else "fv-naive"
    put(r["case"], r["pass"], column, None if "error" in r else r.get("tflops"))
# python -m flashvision.bench times "fwd" and "fwd+bwd" (autograd) too, with the same FLOP count
# (it skips fwd+bwd for forward-only cases). Its own naive and flashvision get columns of their own.
for r in peers:
    column = {"naive": "torch-naive", "flashvision": "fv-python"}.get(r["impl"], r["impl"])
    put(r["case"], r["pass"], column, None if "error" in r else r.get("tflops"))

preferred = ["flashvision", "fv-naive", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "sdpa-math",
             "torch-naive"]
present = {c for row in table.values() for c in row}
columns = [c for c in preferred if c in present] + sorted(present - set(preferred))
peer_columns = [c for c in columns if c.startswith("sdpa-")]
kernels = sorted({r["kernel"] for r in fv if r["impl"] == "flashvision" and r.get("kernel")})
print(f"TFLOP/s (flashvision kernel: {', '.join(kernels) or 'n/a'}); best = best sdpa column; "
      "the ratios use fv-python (the peers' harness) where it ran, else the CLI's flashvision")
print(f"{'case':<18}{'pass':<8}" + "".join(f"{c:>13}" for c in columns) + f"{'fv/FA2':>8}{'fv/best':>8}")
fmt = lambda v: f"{v:13.1f}" if v else f"{'n/a':>13}"
for key in keys:
    row = table[key]
    mine = row.get("fv-python") or row.get("flashvision")
    fa2 = row.get("sdpa-flash")
    best = max((row[c] for c in peer_columns if row.get(c)), default=None)
    ratio = lambda other: f"{mine / other:8.2f}" if mine and other else f"{'n/a':>8}"
    print(f"{key[0]:<18}{key[1]:<8}" + "".join(fmt(row.get(c)) for c in columns) + ratio(fa2) + ratio(best))

problems = []
for r in fv:
    tolerance = 1e-3 if r.get("dtype") == "f32" else 5e-2
    errs = [r.get(k) for k in ("max_err", "max_err_dq", "max_err_dk", "max_err_dv")]
    if "error" in r:
        if not r["error"].startswith("naive S buffer would need"):  # over --naive-cap-mb: expected
            problems.append(f"  {r['case']} {r['impl']} {r['pass']}: {r['error'][:110]}")
    elif "non-finite" in r.get("note", "") or any(e is not None and not e <= tolerance for e in errs):
        problems.append(f"  {r['case']} {r['impl']} {r['pass']}: errors {errs} over {tolerance}, "
                        f"{r.get('note', '')}")
if problems:
    print(f"flashvision bench records that did not run or failed the check ({len(problems)}):")
    print("\n".join(problems[:30]))
PY
fi
echo "== done in $(elapsed); logs in $OUT"
