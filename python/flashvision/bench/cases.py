"""The benchmark shape set of shared/BENCH.md, the --quick subset, the resolution sweep, FLOPs.

The shape set is read from cases.txt beside this file, the table `flashvision bench` (the C++
tool) compiles in, so that both tools run the same cases under the same names.
"""

import os
from dataclasses import dataclass, replace

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.txt")


@dataclass(frozen=True)
class Case:
    """One attention problem in SDPA order: q [B, H, Nq, D], k and v [B, H, Nk, D]."""

    name: str
    B: int
    H: int
    Nq: int
    Nk: int
    D: int
    fwd_only: bool = False  # BENCH.md times the forward alone for the largest case
    side: int = 0  # latent side s of a resolution-sweep case (N = s^2), else 0
    what: str = ""  # what the shape comes from

    def with_batch(self, batch):
        return replace(self, B=batch)


_PASSES = {"fwd+bwd": False, "fwd": True}  # the table's passes field -> Case.fwd_only


def read_table(path=TABLE_PATH):
    """{name: Case} from a case table ("name B H Nq Nk D fwd|fwd+bwd what" lines), in its order."""
    cases = {}
    with open(path, encoding="utf-8") as table:
        for number, line in enumerate(table, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(None, 7)
            try:
                name, *dims, passes, what = fields
                dims = [int(x) for x in dims]
                if len(dims) != 5 or min(dims) < 1 or passes not in _PASSES:
                    raise ValueError
            except ValueError:
                raise ValueError(f"{path}:{number}: expected 'name B H Nq Nk D fwd|fwd+bwd what' "
                                 f"(positive integers), got {line!r}") from None
            cases[name] = Case(name, *dims, fwd_only=_PASSES[passes], what=what)
    return cases


CASES = read_table()

# --quick: image-model shapes that cover short/long, self/cross and odd head dims, at B = 1, so
# that a CPU run (where N^2 work at full batch takes minutes) finishes in seconds.
QUICK_CASES = ("vit-b16-224", "sd15-self-16", "sd15-self-32", "sd15-cross-64", "dit-xl2-512",
               "sd15-self-64")
QUICK_BATCH = 1

# Resolution sweep: SD-style self-attention at latent side s (N = s^2 tokens), B=1, H=8, D=40.
# The GPU list goes past 128 so that naive's N^2 buffer passes the cap where flashvision runs.
SWEEP_SIDES_CUDA = (16, 32, 48, 64, 96, 128, 192, 256)
SWEEP_SIDES_CPU = (8, 16, 24, 32, 48, 64)
SWEEP_SIDES_CPU_QUICK = (8, 16, 24, 32)


def sweep_case(side):
    """The SD self-attention case of the resolution sweep at latent side `side`."""
    n = side * side
    return Case(f"sd-self-s{side}", 1, 8, n, n, 40, side=side)


def shape_case(b, h, nq, nk, d):
    """A case given by --shape B,H,Nq,Nk,D."""
    return Case(f"shape-{b}x{h}x{nq}x{nk}x{d}", b, h, nq, nk, d)


PASS_FACTOR = {"fwd": 1.0, "bwd": 2.5, "fwd+bwd": 3.5}  # backward = five GEMMs of the two


def flops(case, pass_, causal=False):
    """FLOPs of one call: forward 4*B*H*Nq*Nk*D (two GEMMs), times PASS_FACTOR; causal halves."""
    forward = 4.0 * case.B * case.H * case.Nq * case.Nk * case.D
    return forward * PASS_FACTOR[pass_] * (0.5 if causal else 1.0)
