"""Helpers shared by the torch test modules that are not references: the marks of CUDA-only
modules and a counter of flashvision's calls through an integration."""

import pytest
import torch

import flashvision


def cuda_module_marks():
    """pytestmark of a module that needs a GPU and a CUDA build of flashvision."""
    return [
        pytest.mark.cuda,
        pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"),
        pytest.mark.skipif("cuda-sm80" not in flashvision.compiled_backends(),
                           reason="flashvision was built without CUDA (FLASHVISION_CUDA=OFF, no "
                                  "nvcc)"),
    ]


def count_flashvision_calls(monkeypatch, module):
    """Counts calls of flashvision's op made through integration `module` (so that a silent
    fallback to torch fails the test)."""
    calls = []
    forward = module._functional.forward

    def counting(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)

    monkeypatch.setattr(module._functional, "forward", counting)
    return calls
