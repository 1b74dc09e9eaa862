"""One case: fresh inputs, then one record per (implementation, pass) on those same inputs."""

import gc
import itertools
import math
import warnings
from dataclasses import dataclass

import torch

from . import impls as impl_lib
from .cases import flops
from .inputs import DTYPES, make_sample, make_sets, max_error
from .memory import peak_extra_bytes
from .timing import median_ms


@dataclass
class Settings:
    """What every measurement of a run shares."""

    device: str
    dtype: str  # "bf16" | "f16" | "f32"
    budget_s: float
    naive_cap_bytes: int


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


def _measure(case, impl, pass_, sets, sample, settings, record):
    forward = impl_lib.forward_fn(impl, 1.0 / math.sqrt(case.D))
    call = _make_call(forward, sets, pass_)
    grad_mode = torch.no_grad() if pass_ == "fwd" else torch.enable_grad()
    with warnings.catch_warnings(), grad_mode:
        # SDPA warns at length about why a backend cannot run before raising; the record says it.
        warnings.simplefilter("ignore")
        out, dq = call()  # raises for shapes the backend rejects; also warms up
        record["max_err"] = max_error(sample, out, dq)
        del out, dq
        _, record["peak_bytes"] = peak_extra_bytes(call, settings.device)
        ms, _ = median_ms(call, settings.budget_s, settings.device)
    record["ms"] = ms
    record["tflops"] = flops(case, pass_) / (ms * 1e-3) / 1e12


def measure(case, impl, pass_, sets, sample, settings, kernel=None):
    """The record of `impl` running `pass_` on `case`; with "error" when it did not run.
    `kernel` is flashvision's kernel on these inputs (recorded for the flashvision impl)."""
    record = _record(case, settings, impl, pass_, kernel)
    if impl in impl_lib.QUADRATIC_IMPLS:
        need = impl_lib.scores_bytes(case, impl, DTYPES[settings.dtype])
        if need > settings.naive_cap_bytes:
            record["error"] = (f"skipped: its {need / 2**30:.3g} GiB score matrix passes "
                               f"--naive-cap-gb {settings.naive_cap_bytes / 2**30:.3g}")
            return record
    try:
        _measure(case, impl, pass_, sets, sample, settings, record)
    except Exception as exc:  # rejected shape, missing backend or out of memory: n/a
        record.update(ms=None, tflops=None, peak_bytes=None, max_err=None)
        record["error"] = _describe(exc)
    finally:
        _release(settings.device)
    return record


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
    for impl, pass_ in itertools.product(impls, passes):
        progress.start(case.name, impl, pass_)
        record = measure(case, impl, pass_, sets if pass_ == "fwd" else grad_sets, sample,
                         settings, kernels.get(pass_))
        records.append(record)
        progress.step()
    del sets, grad_sets
    _release(settings.device)
    return records
