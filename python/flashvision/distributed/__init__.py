"""Context parallelism over torch.distributed: one attention split across the ranks of a group.

Each rank holds a contiguous slice of the sequence, q [B, N_local, H, D] and k, v
[B, N_local, Hkv, D], rank r holding tokens [r * N_local, (r + 1) * N_local). The result is each
rank's slice of the attention over the whole sequence, exact (not an approximation), with
autograd.

- ``ring_attention``: K/V blocks travel around the ring (point-to-point), overlapped with the local
  flashvision call; any head count.
- ``ulysses_attention``: two all-to-alls turn the sequence split into a head split and back; needs
  H and Hkv divisible by the world size.

See docs/distributed.md for which to pick when.
"""

from ._ring import ring_attention
from ._ulysses import ulysses_attention

__all__ = ["ring_attention", "ulysses_attention"]
