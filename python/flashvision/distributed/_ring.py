"""Ring attention: K/V blocks travel around the ranks while each rank attends to the block in
hand; partial results merge exactly through their log-sum-exp.

Forward, on rank r of W: at step s the rank holds the K/V block of rank (r - s) mod W. It posts
the send of that block to rank r + 1 and the receive of the next one from rank r - 1, runs
flashvision on the block in hand meanwhile, merges, and waits for the transfer.

Backward recomputes block by block with flashvision's backward, given the GLOBAL lse and the
final output: the probabilities exp(s - lse) and D = rowsum(dO * O) are then the whole-sequence
ones, so each block's dq, dk, dv are exact pieces of the full gradients. dq accumulates on its
rank; dK/dV accumulators (float32) travel around the ring with their block and, after W hops,
arrive back at the owner.

Causal (contiguous split, bottom-right mask): rank r's queries see the blocks of ranks < r fully,
its own block under the causal mask (the blocks are equal-length, so bottom-right is the
diagonal), and nothing of ranks > r; those blocks are skipped. Rank W - 1 therefore does W block
calls and rank 0 one (a known imbalance; zigzag or striped layouts would even it out).
"""

import torch
import torch.distributed as dist

from ..torch import _ops
from . import _group
from ._merge import merge_into

# Point-to-point tags (gloo matches on them; NCCL ignores them): K/V blocks and dK/dV blocks
# travel between the same pair of ranks at the same time and must not be confused.
_TAG_KV = 0
_TAG_DKV = 1


class _Ring:
    """The ring of a process group: who this rank sends to and receives from."""

    def __init__(self, group, rank, world):
        self.group, self.rank, self.world = group, rank, world
        self.next = _group.global_rank(group, (rank + 1) % world)
        self.prev = _group.global_rank(group, (rank - 1) % world)

    def start_shift(self, tensor, tag):
        """Posts tensor -> next rank and prev rank -> a new buffer; returns (buffer, requests)."""
        received = torch.empty_like(tensor)
        ops = [dist.P2POp(dist.isend, tensor, self.next, self.group, tag),
               dist.P2POp(dist.irecv, received, self.prev, self.group, tag)]
        return received, dist.batch_isend_irecv(ops)

    def block_mask(self, step, causal):
        """For the block held at step: None to skip it, else the causal flag of its call."""
        source = (self.rank - step) % self.world
        if not causal or source < self.rank:
            return False
        return True if source == self.rank else None


def _wait(requests):
    for request in requests:
        request.wait()


def _ring_forward(ring, q, kv, scale, causal):
    """(out in q's dtype, global lse float32 [B, H, N_local]) of q against every rank's K/V."""
    out = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.full((q.shape[0], q.shape[2], q.shape[1]), float("-inf"), dtype=torch.float32,
                     device=q.device)
    for step in range(ring.world):
        last = step + 1 == ring.world
        if not last:
            incoming, requests = ring.start_shift(kv, _TAG_KV)
        block_causal = ring.block_mask(step, causal)
        if block_causal is not None:
            block_out, block_lse = _ops.fwd(q, kv[0], kv[1], None, None, 0, 0, scale,
                                            block_causal)
            merge_into(out, lse, block_out, block_lse)
        if not last:
            _wait(requests)
            kv = incoming
    return out.to(q.dtype), lse


def _ring_backward(ring, dout, q, kv, out, lse, scale, causal):
    """(dq float32, dkv float32 [2, B, N_local, Hkv, D]) for this rank's q and K/V block."""
    dq = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    dkv = torch.zeros(kv.shape, dtype=torch.float32, device=q.device)
    dkv_incoming, dkv_requests = None, None
    for step in range(ring.world):
        last = step + 1 == ring.world
        if not last:
            incoming, kv_requests = ring.start_shift(kv, _TAG_KV)
        block_causal = ring.block_mask(step, causal)
        if block_causal is not None:
            dq_block, dk_block, dv_block = _ops.bwd(dout, q, kv[0], kv[1], out, lse, None, None,
                                                    0, 0, scale, block_causal, False)
        if dkv_requests is not None:
            # The accumulator of the block in hand, arriving from the previous rank.
            _wait(dkv_requests)
            dkv = dkv_incoming
        if block_causal is not None:
            dq.add_(dq_block)
            dkv[0].add_(dk_block)
            dkv[1].add_(dv_block)
        if ring.world > 1:
            dkv_incoming, dkv_requests = ring.start_shift(dkv, _TAG_DKV)
        if not last:
            _wait(kv_requests)
            kv = incoming
    if dkv_requests is not None:
        _wait(dkv_requests)
        dkv = dkv_incoming  # after W hops: this rank's own block, complete
    return dq, dkv


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, ring, scale, causal):
        out, lse = _ring_forward(ring, q, torch.stack([k, v]), scale, causal)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.options = (ring, scale, causal)
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        ring, scale, causal = ctx.options
        dq, dkv = _ring_backward(ring, dout, q, torch.stack([k, v]), out, lse, scale, causal)
        return dq.to(q.dtype), dkv[0].to(k.dtype), dkv[1].to(v.dtype), None, None, None


def ring_attention(q, k, v, group=None, *, scale=None, causal=False):
    """This rank's slice of attention over the sequence split across group, by ring.

    q [B, N_local, H, D], k and v [B, N_local, Hkv, D] (H a multiple of Hkv): rank r holds tokens
    [r * N_local, (r + 1) * N_local), with the same N_local on every rank. Returns
    [B, N_local, H, D], differentiable. scale None means 1/sqrt(D); causal is the mask over the
    whole sequence. Every rank of group must call it with the same arguments' shapes.
    """
    scale = _group.check_arguments(q, k, v, scale, causal)
    group, rank, world = _group.group_of(group)
    _group.check_shards(q, k, v, group, world)
    return _RingAttention.apply(q, k, v, _Ring(group, rank, world), scale, causal)
