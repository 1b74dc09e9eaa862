"""Shared fixtures: a fresh seed per test (printed when the test fails) and poisoned outputs.

Reproduce a failure with FLASHVISION_TEST_SEED=<seed> pytest tests/python -k <test>.
"""

import os
import secrets

import numpy as np
import pytest

import flashvision


def _test_seed():
    fixed = os.environ.get("FLASHVISION_TEST_SEED")
    return int(fixed) if fixed else secrets.randbits(32)


@pytest.fixture
def seed(request):
    """A fresh random seed for this test, reported if the test fails."""
    value = _test_seed()
    request.node.flashvision_seed = value
    return value


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed_value = getattr(item, "flashvision_seed", None)
    if report.failed and seed_value is not None:
        hint = f"seed {seed_value}: rerun with FLASHVISION_TEST_SEED={seed_value}"
        report.sections.append(("flashvision seed", hint))


@pytest.fixture(autouse=True)
def poison_outputs(monkeypatch):
    """Every output the package allocates starts as NaN, so an element the library forgets to
    write fails the comparison instead of passing by luck."""
    from flashvision import _frontend

    def nan_like(x):
        out = np.empty_like(x)
        out.fill(np.nan)
        return out

    def nan_empty(shape, dtype):
        out = np.empty(shape, dtype=dtype)
        out.fill(np.nan)
        return out

    monkeypatch.setattr(_frontend, "_empty_like", nan_like)
    monkeypatch.setattr(_frontend, "_empty", nan_empty)
    try:
        import torch
    except ImportError:
        return
    from flashvision.torch import _ops

    def nan_like_torch(x, dtype=None):
        out = torch.empty_like(x, dtype=dtype)
        return out.fill_(float("nan")) if out.is_floating_point() else out

    def nan_lse(q, varlen, heads_first=False):
        return torch.full(_ops._lse_shape(q, varlen, heads_first), float("nan"), device=q.device)

    monkeypatch.setattr(_ops, "_empty_like", nan_like_torch)
    monkeypatch.setattr(_ops, "_empty_lse", nan_lse)


def pytest_report_header(config):
    lines = [f"flashvision {flashvision.__version__}: backends {flashvision.compiled_backends()}"]
    lines += [f"  {line}" for line in flashvision.describe_devices()]
    try:
        import torch
    except ImportError:
        lines.append("torch: not installed; the torch tests will be skipped")
    else:
        lines.append(f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}")
    return lines
