"""The benchmark shape set of shared/BENCH.md, the --quick subset, the resolution sweep, FLOPs."""

from dataclasses import dataclass, replace


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

    def with_batch(self, batch):
        return replace(self, B=batch)


def _bench_cases():
    cases = []
    for d in (64, 128, 256):
        for n in (1024, 4096, 16384):
            # FA-paper sweep: 16k tokens in all, H * D = 2048.
            cases.append(Case(f"sweep-d{d}-n{n}", 16384 // n, 2048 // d, n, n, d))
    cases += [
        Case("vit-b16-224", 256, 12, 197, 197, 64),
        Case("vit-l14-336", 64, 16, 577, 577, 64),
        Case("vit-h14-224", 128, 16, 257, 257, 80),
        Case("sd15-self-64", 2, 8, 4096, 4096, 40),
        Case("sd15-cross-64", 2, 8, 4096, 77, 40),
        Case("sd15-self-32", 2, 8, 1024, 1024, 80),
        Case("sd15-self-16", 2, 8, 256, 256, 160),
        Case("sdxl-self-128", 2, 10, 4096, 4096, 64),
        Case("sdxl-cross", 2, 10, 4096, 77, 64),
        Case("dit-xl2-512", 16, 16, 1024, 1024, 72),
        Case("flux-1024", 1, 24, 4608, 4608, 128),
        Case("flux-2048", 1, 24, 16896, 16896, 128),
        Case("video-49f-720p", 1, 24, 32760, 32760, 128, fwd_only=True),
        Case("vae-mid-512", 1, 1, 4096, 4096, 512),
    ]
    return {case.name: case for case in cases}


CASES = _bench_cases()

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
