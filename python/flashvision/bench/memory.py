"""Peak extra memory of one call beyond what exists before it (the inputs).

GPU: the caching allocator's peak counter (torch.cuda.max_memory_allocated) minus the bytes
allocated before the call. CPU: the process's resident-set high-water mark (VmHWM), reset to the
current RSS through /proc/self/clear_refs ("5"); None where Linux's /proc does not allow it.
The CPU figure is a lower bound: memory the allocator already holds from earlier calls is reused
without raising the RSS.
"""

import re

import torch

_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"


def _status_kib(field):
    with open(_STATUS) as f:
        match = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.MULTILINE)
    return int(match.group(1)) if match else None


def _reset_rss_peak():
    """Resets VmHWM to the current RSS; False when the kernel does not let us."""
    try:
        with open(_CLEAR_REFS, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_extra_bytes(fn, device):
    """(result of fn(), peak extra bytes during it or None)."""
    if device == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        result = fn()
        torch.cuda.synchronize()
        return result, int(torch.cuda.max_memory_allocated() - base)
    try:
        tracked = _reset_rss_peak()
        base = _status_kib("VmRSS") if tracked else None
    except OSError:
        base = None
    result = fn()
    if base is None:
        return result, None
    try:
        peak = _status_kib("VmHWM")
    except OSError:
        return result, None
    return result, None if peak is None else max(0, peak - base) * 1024
