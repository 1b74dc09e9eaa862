"""One case: fresh inputs, then one record per (implementation, pass) on those same inputs."""

import contextlib
import gc
import itertools
import math
import time
import warnings
from dataclasses import dataclass

import torch

from . import impls as impl_lib
from .cases import flops
from .inputs import DTYPES, make_sample, make_sets, max_error
from .memory import peak_extra_bytes
from .timing import graph_capture, interleaved_cpu_ms, median_ms, median_of


@dataclass
class Settings:
    """What every measurement of a run shares."""

    device: str
    dtype: str  # "bf16" | "f16" | "f32"
    budget_s: float
    naive_cap_bytes: int
    rounds: int = 1  # CPU: > 1 times a case's impls in that many interleaved rounds
    cuda_graphs: bool = False  # CUDA: time replays of each call captured in a graph
    telemetry: object = None  # CUDA: a telemetry.Sampler that gets each timing's window


def _record(case, settings, impl, pass_, kernel=None):
    """A record without measurements; `kernel` is flashvision's kernel for the case (or None)."""
    record = {"case": case.name, "B": case.B, "H": case.H, "Hkv": case.H, "Nq": case.Nq,
              "Nk": case.Nk, "D": case.D, "dtype": settings.dtype, "causal": False,
              "device": settings.device, "impl": impl}
    if impl == "flashvision":
        record["kernel"] = kernel
    record.update({"pass": pass_, "ms": None, "tflops": None, "peak_bytes": None,
                   "max_err": None})
    return record


def _describe(exc):
    """'Type: first line of the message' (SDPA's messages run over many lines)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}".rstrip(": ")


def _release(device):
    gc.collect()
    if device == "cuda":
        try:
            torch.cuda.synchronize()
        except Exception:  # an error the failed call left on the device; later calls report it
            pass
        torch.cuda.empty_cache()


def _make_call(forward, sets, pass_):
    """A callable that runs one pass on the next input set and returns (out, dq or None)."""
    counter = itertools.count()

    def call():
        s = sets[next(counter) % len(sets)]
        out = forward(s.q, s.k, s.v)
        if pass_ == "fwd":
            return out, None
        dq, _, _ = torch.autograd.grad(out, (s.q, s.k, s.v), s.dout)
        return out, dq

    return call


@contextlib.contextmanager
def _quiet(pass_):
    """What every call of a pass runs under: no autograd for the forward alone, and none of
    SDPA's lengthy warnings about why a backend cannot run before it raises (the record says
    it)."""
    with warnings.catch_warnings(), (torch.no_grad() if pass_ == "fwd" else torch.enable_grad()):
        warnings.simplefilter("ignore")
        yield


def _prepare(case, impl, pass_, sets, sample, settings, record):
    """The call that times `impl` on `pass_`, after its first call (which raises for shapes the
    backend rejects, and warms up) set the record's max_err and a second its peak_bytes."""
    forward = impl_lib.forward_fn(impl, 1.0 / math.sqrt(case.D), sets)
    call = _make_call(forward, sets, pass_)
    with _quiet(pass_):
        out, dq = call()
        record["max_err"] = max_error(sample, out, dq)
        del out, dq
        _, record["peak_bytes"] = peak_extra_bytes(call, settings.device)
    return call


def _set_time(record, case, pass_, ms):
    record["ms"] = ms
    record["tflops"] = flops(case, pass_) / (ms * 1e-3) / 1e12


def _set_error(record, exc):
    """A record that did not run (rejected shape, missing backend or out of memory): n/a."""
    record.update(ms=None, tflops=None, peak_bytes=None, max_err=None)
    record["error"] = _describe(exc)


def _skip_reason(case, impl, settings):
    """Why `impl` is not run on `case` at all, or None."""
    if impl in impl_lib.QUADRATIC_IMPLS:
        need = impl_lib.scores_bytes(case, impl, DTYPES[settings.dtype])
        if need > settings.naive_cap_bytes:
            return (f"skipped: its {need / 2**30:.3g} GiB score matrix passes "
                    f"--naive-cap-gb {settings.naive_cap_bytes / 2**30:.3g}")
    return None


def measure(case, impl, pass_, sets, sample, settings, kernel=None):
    """The record of `impl` running `pass_` on `case`, timed on its own; with "error" when it did
    not run. `kernel` is flashvision's kernel on these inputs (recorded for the flashvision
    impl)."""
    record = _record(case, settings, impl, pass_, kernel)
    reason = _skip_reason(case, impl, settings)
    if reason is not None:
        record["error"] = reason
        return record
    try:
        call = _prepare(case, impl, pass_, sets, sample, settings, record)
        with _quiet(pass_):
            if settings.cuda_graphs:
                call, _ = graph_capture(call)
            start = time.time()
            ms, _ = median_ms(call, settings.budget_s, settings.device)
        if settings.telemetry is not None:
            settings.telemetry.window(record, start, time.time())
        _set_time(record, case, pass_, ms)
    except Exception as exc:
        _set_error(record, exc)
    finally:
        _release(settings.device)
    return record


def measure_interleaved(case, impls, pass_, sets, sample, settings, kernel=None):
    """The records of each of `impls` running `pass_` on `case` (CPU), in `impls` order, timed
    in settings.rounds interleaved rounds (timing.interleaved_cpu_ms): a record's ms is the median
    of all its timed calls, its round_ms the median of each round's, from which records.speedup
    takes the ratio of two impls round by round. `kernel` as in measure()."""
    records, timed = [], []
    for impl in impls:
        record = _record(case, settings, impl, pass_, kernel)
        records.append(record)
        reason = _skip_reason(case, impl, settings)
        if reason is not None:
            record["error"] = reason
            continue
        try:
            timed.append((record, _prepare(case, impl, pass_, sets, sample, settings, record)))
        except Exception as exc:
            _set_error(record, exc)
        finally:
            _release(settings.device)
    if not timed:
        return records
    try:
        with _quiet(pass_):
            per_round = interleaved_cpu_ms([call for _, call in timed], settings.budget_s,
                                           settings.rounds)
    except Exception as exc:  # one failed after its first calls ran: no figure for any
        for record, _ in timed:
            _set_error(record, exc)
    else:
        for (record, _), rounds in zip(timed, per_round):
            _set_time(record, case, pass_, median_of([ms for r in rounds for ms in r]))
            record["round_ms"] = [median_of(r) for r in rounds]
    finally:
        del timed
        _release(settings.device)
    return records


def _grad_views(sets):
    """The same input sets as leaves that require grad (views: no copy)."""
    return [type(s)(*(x.detach().requires_grad_() for x in (s.q, s.k, s.v)), s.dout)
            for s in sets]


def run_case(case, impls, passes, settings, seed, progress):
    """Records of every impl x pass on one fresh input set of `case`, in that order."""
    device_gen = torch.Generator(device=settings.device).manual_seed(seed)
    sample_gen = torch.Generator().manual_seed(seed)
    records = []
    try:
        sets = make_sets(case, DTYPES[settings.dtype], settings.device, device_gen)
        sample = make_sample(case, sets[0], sample_gen)
    except Exception as exc:  # the inputs alone do not fit
        _release(settings.device)
        for impl, pass_ in itertools.product(impls, passes):
            record = _record(case, settings, impl, pass_)
            record["error"] = "inputs: " + _describe(exc)
            records.append(record)
            progress.step()
        return records
    grad_sets = _grad_views(sets) if "fwd+bwd" in passes else None
    # Asked only when flashvision runs, so that peer-only runs need nothing of flashvision's.
    kernels = {}
    if "flashvision" in impls:
        forward_kernel = impl_lib.flashvision_kernel(sets[0])
        backward_kernel = (impl_lib.flashvision_kernel(sets[0], backward=True)
                           if "fwd+bwd" in passes else None)
        kernels = {p: impl_lib.pass_kernel(forward_kernel, backward_kernel, p) for p in passes}
    if settings.device == "cpu" and settings.rounds > 1:
        by_key = {}
        for pass_ in passes:
            progress.start(case.name, "+".join(impls), pass_)
            for record in measure_interleaved(case, impls, pass_,
                                              sets if pass_ == "fwd" else grad_sets, sample,
                                              settings, kernels.get(pass_)):
                by_key[record["impl"], pass_] = record
                progress.step()
        records = [by_key[key] for key in itertools.product(impls, passes)]
    else:
        for impl, pass_ in itertools.product(impls, passes):
            progress.start(case.name, impl, pass_)
            record = measure(case, impl, pass_, sets if pass_ == "fwd" else grad_sets, sample,
                             settings, kernels.get(pass_))
            records.append(record)
            progress.step()
    del sets, grad_sets
    _release(settings.device)
    return records
