"""Ulysses (head-parallel) attention: an all-to-all turns the sequence split into a head split,
each rank runs flashvision on the whole sequence for H / W of the heads, and an all-to-all turns
the result back. The gradient of an all-to-all is the opposite all-to-all."""

import torch
import torch.distributed as dist

from ..torch import _ops
from . import _group


def _seq_to_head(x, group, world):
    """[B, N_local, H, D] sequence slice -> [B, W * N_local, H / W, D] head slice."""
    b, n, h, d = x.shape
    send = x.reshape(b, n, world, h // world, d).permute(2, 0, 1, 3, 4).contiguous()
    received = torch.empty_like(send)  # [source rank (sequence slice), B, N_local, H / W, D]
    dist.all_to_all_single(received, send, group=group)
    return received.permute(1, 0, 2, 3, 4).reshape(b, world * n, h // world, d)


def _head_to_seq(y, group, world):
    """[B, W * N_local, H / W, D] head slice -> [B, N_local, H, D] sequence slice."""
    b, n, h, d = y.shape
    send = y.reshape(b, world, n // world, h, d).permute(1, 0, 2, 3, 4).contiguous()
    received = torch.empty_like(send)  # [source rank (head slice), B, N_local, H / W, D]
    dist.all_to_all_single(received, send, group=group)
    return received.permute(1, 2, 0, 3, 4).reshape(b, n // world, world * h, d)


class _SeqToHead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group, world):
        ctx.options = (group, world)
        return _seq_to_head(x, group, world)

    @staticmethod
    def backward(ctx, grad):
        return _head_to_seq(grad, *ctx.options), None, None


class _HeadToSeq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, group, world):
        ctx.options = (group, world)
        return _head_to_seq(y, group, world)

    @staticmethod
    def backward(ctx, grad):
        return _seq_to_head(grad, *ctx.options), None, None


def ulysses_attention(q, k, v, group=None, *, scale=None, causal=False):
    """This rank's slice of attention over the sequence split across group, head-parallel.

    Same contract as ring_attention (q [B, N_local, H, D], k and v [B, N_local, Hkv, D], rank r
    holding tokens [r * N_local, (r + 1) * N_local)), and H and Hkv must be multiples of the
    group's size. Returns [B, N_local, H, D], differentiable.
    """
    scale = _group.check_arguments(q, k, v, scale, causal)
    group, _, world = _group.group_of(group)
    _group.check_shards(q, k, v, group, world)
    for name, heads in (("q", q.shape[2]), ("k", k.shape[2])):
        if heads % world != 0:
            raise ValueError(
                f"{name} has {heads} heads, not a multiple of the world size {world}; "
                "ulysses_attention splits the heads across the ranks (use ring_attention)")
    if world == 1:
        return _ops.fwd(q, k, v, None, None, 0, 0, scale, causal)[0]
    q, k, v = (_SeqToHead.apply(x, group, world) for x in (q, k, v))
    out, _ = _ops.fwd(q, k, v, None, None, 0, 0, scale, causal)
    return _HeadToSeq.apply(out, group, world)
