"""Median wall time of a callable: CUDA events (or triton's do_bench) on a GPU, perf_counter on
the CPU. The callable rotates among input sets itself.

On the CPU the implementations of one case are timed in interleaved rounds (interleaved_cpu_ms):
a shared machine's speed drifts by 10-15 % over seconds, and timing every repeat of one
implementation before any of the next puts that drift into their ratio."""

import functools
import time

import torch

MIN_REPEATS = 3
MAX_REPEATS = 200
WARMUP_CALLS = 2
CPU_ROUNDS = 5  # interleaved rounds per CPU measurement (--rounds)


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def _cpu_times(fn, budget_s, min_repeats, max_repeats):
    """The ms of each timed call of fn(): at least min_repeats, then until budget_s has passed or
    max_repeats were timed."""
    times = []
    start = time.perf_counter()
    while len(times) < max_repeats and (len(times) < min_repeats
                                        or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def cpu_ms(fn, budget_s):
    """Median ms of fn() on the CPU, after warm-up, repeating until the budget is spent."""
    for _ in range(WARMUP_CALLS):
        fn()
    return _median(_cpu_times(fn, budget_s, MIN_REPEATS, MAX_REPEATS))


def interleaved_cpu_ms(fns, budget_s, rounds):
    """Per callable of `fns`, its timed calls' ms grouped by round: [[round 0 ms...], ...].

    Each round times every callable in turn, each for budget_s / rounds seconds after one
    untimed call (what another callable left in the caches is not its cost), in forward order
    in even rounds and backward in odd ones, so that neither goes first every time. In total
    each callable gets the budget and the repeat cap of cpu_ms, and at least one timed call per
    round (MIN_REPEATS when rounds is 1, which is cpu_ms's timing)."""
    per_round = []
    min_repeats = max(1, -(-MIN_REPEATS // rounds))
    max_repeats = max(min_repeats, MAX_REPEATS // rounds)
    for _ in fns:
        per_round.append([])
    for r in range(rounds):
        order = range(len(fns)) if r % 2 == 0 else range(len(fns) - 1, -1, -1)
        for i in order:
            fns[i]()
            per_round[i].append(_cpu_times(fns[i], budget_s / rounds, min_repeats, max_repeats))
    return per_round


def median_of(values):
    """The median of `values` (the upper one of an even count, as every figure here)."""
    return _median(values)


def cuda_event_ms(fn, budget_s):
    """Median ms of fn() between CUDA events on the current stream, after warm-up."""
    for _ in range(WARMUP_CALLS):
        fn()
    torch.cuda.synchronize()
    times = []
    start = time.perf_counter()
    while len(times) < MAX_REPEATS and (len(times) < MIN_REPEATS
                                        or time.perf_counter() - start < budget_s):
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()  # per repeat, so host overhead of the next call does not overlap
        times.append(begin.elapsed_time(end))
    return _median(times)


@functools.lru_cache(maxsize=None)
def _triton_do_bench():
    """triton.testing.do_bench if it imports and works here (tried once on a tiny op), else None."""
    try:
        from triton.testing import do_bench

        probe = torch.ones(1, device="cuda")
        do_bench(lambda: probe.add_(1), warmup=1, rep=1, return_mode="median")
        return do_bench
    except Exception:  # not installed, no driver for it, or an API without return_mode
        return None


def cuda_ms(fn, budget_s):
    """Median ms of fn() on the GPU: triton.testing.do_bench when usable (it also flushes L2
    between repeats), else CUDA events. Returns (ms, timer name)."""
    do_bench = _triton_do_bench()
    if do_bench is None:
        return cuda_event_ms(fn, budget_s), "cuda-events"
    budget_ms = budget_s * 1e3
    ms = do_bench(fn, warmup=max(1.0, budget_ms / 4), rep=max(1.0, budget_ms),
                  return_mode="median")
    torch.cuda.synchronize()
    return float(ms), "triton.do_bench"


def graph_capture(fn):
    """fn() captured once in a CUDA graph: (the graph's replay, what the captured call returned,
    which are the tensors each replay writes again). A replay launches the same kernels on the
    same memory without the host's per-call work (Python, dispatch, autograd, launch calls). fn
    runs twice on a side stream first, as capture needs: lazy initialization and the allocator's
    first allocations must not happen inside the capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP_CALLS):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = fn()
    return graph.replay, outputs


def median_ms(fn, budget_s, device):
    """(median ms, timer name) of fn() on `device`."""
    if device == "cuda":
        return cuda_ms(fn, budget_s)
    return cpu_ms(fn, budget_s), "perf_counter"


def timer_name(device, cuda_graphs=False):
    """The name of the timer median_ms uses on `device` (for the results' meta); cuda_graphs: it
    times graph_capture's replays."""
    if device == "cuda":
        name = "triton.do_bench" if _triton_do_bench() is not None else "cuda-events"
        return name + " of CUDA graph replays" if cuda_graphs else name
    return "perf_counter"
