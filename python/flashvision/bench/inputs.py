"""Random inputs of a case, rotation among sets, and the float64 reference on sampled rows."""

import math
from dataclasses import dataclass

import torch

L2_BYTES = 60 << 20  # H200 L2: below this, repeats would time cache hits, not HBM traffic
MAX_SETS = 8
SAMPLE_HEADS = 4  # (b, h) pairs checked against the reference
SAMPLE_ROWS = 32  # query rows per pair

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


@dataclass
class InputSet:
    """q [B, H, Nq, D], k and v [B, H, Nk, D] and the upstream gradient dout (like q)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    dout: torch.Tensor


@dataclass
class Sample:
    """Where the outputs are checked, and the float64 reference there (on the CPU)."""

    heads: list  # [(b, h)]
    rows: torch.Tensor  # query row indices, int64
    out: torch.Tensor  # [len(heads), len(rows), D]
    dq: torch.Tensor  # same shape


def set_count(case, dtype, device):
    """How many input sets to rotate among: enough to overflow L2 when one set fits in it."""
    if device != "cuda":
        return 1
    elem = torch.empty((), dtype=dtype).element_size()
    set_bytes = elem * case.B * case.H * (2 * case.Nq + 2 * case.Nk) * case.D
    return 1 if set_bytes >= L2_BYTES else min(MAX_SETS, math.ceil(3 * L2_BYTES / set_bytes))


def make_sets(case, dtype, device, generator):
    """Fresh random normal inputs (never zeros, so skipped work cannot pass as correct), drawn
    on `device` by `generator` (a generator of that device)."""
    def randn(n):
        return torch.randn(case.B, case.H, n, case.D, generator=generator, dtype=dtype,
                           device=device)

    return [InputSet(randn(case.Nq), randn(case.Nk), randn(case.Nk), randn(case.Nq))
            for _ in range(set_count(case, dtype, device))]


def make_sample(case, inputs, generator):
    """float64 reference of out and dq for a few (b, h) pairs and rows of input set 0.

    Row-wise formulas, so no full N x N matrix is formed: p = softmax(q k^T s), out = p v,
    dq = s * (p * (dout v^T - rowsum(dout * out))) k.
    """
    pairs = min(SAMPLE_HEADS, case.B * case.H)
    flat = torch.randperm(case.B * case.H, generator=generator)[:pairs].tolist()
    heads = [(i // case.H, i % case.H) for i in flat]
    rows = torch.randperm(case.Nq, generator=generator)[:min(SAMPLE_ROWS, case.Nq)]
    rows = rows.sort().values
    scale = 1.0 / math.sqrt(case.D)
    outs, dqs = [], []
    for b, h in heads:
        def pick(x, index=None):
            x = x[b, h] if index is None else x[b, h, index.to(x.device)]
            return x.detach().to(device="cpu", dtype=torch.float64)

        q, dout = pick(inputs.q, rows), pick(inputs.dout, rows)
        k, v = pick(inputs.k), pick(inputs.v)
        p = torch.softmax(q @ k.T * scale, dim=-1)
        out = p @ v
        ds = p * (dout @ v.T - (dout * out).sum(-1, keepdim=True))
        outs.append(out)
        dqs.append(scale * ds @ k)
    return Sample(heads, rows, torch.stack(outs), torch.stack(dqs))


def max_error(sample, out, dq=None):
    """Largest absolute difference from the reference on the sampled rows (out, and dq if given);
    NaN when any checked element is NaN."""
    worst = 0.0
    for tensor, reference in ((out, sample.out), (dq, sample.dq)):
        if tensor is None:
            continue
        rows = sample.rows.to(tensor.device)
        got = torch.stack([tensor[b, h].index_select(0, rows) for b, h in sample.heads])
        diff = float((got.detach().to(device="cpu", dtype=torch.float64) - reference).abs().max())
        if math.isnan(diff):  # max() below would silently drop a NaN
            return diff
        worst = max(worst, diff)
    return worst
