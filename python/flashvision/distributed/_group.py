"""Process-group helpers and the argument checks both context-parallel schemes share."""

import torch
import torch.distributed as dist

from .. import _checks as checks

# Layout of the per-rank shape record gathered by check_shards.
_FIELDS = ("B", "Nq", "H", "D", "Nk", "Hkv", "Nv")


def group_of(group):
    """(group, rank, world size) for group (None: the default group)."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("flashvision.distributed needs an initialized torch.distributed "
                           "process group (torch.distributed.init_process_group)")
    group = dist.group.WORLD if group is None else group
    return group, dist.get_rank(group), dist.get_world_size(group)


def global_rank(group, group_rank):
    """The global rank of group_rank in group (point-to-point ops address global ranks)."""
    return dist.get_global_rank(group, group_rank) if group is not dist.group.WORLD else group_rank


def check_arguments(q, k, v, scale, causal):
    """The softmax scale as the op takes it (0.0: 1/sqrt(D)); raises on malformed arguments."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {checks.type_name(x)}")
        if x.dim() != 4:
            raise ValueError(f"{name} has shape {tuple(x.shape)}; expected rank 4 "
                             "([B, N_local, H, D])")
    checks.check_bool("causal", causal)
    return checks.check_scale(scale)


def check_shards(q, k, v, group, world):
    """Raises ValueError on every rank unless all ranks hold slices of one problem: the same B,
    H, Hkv and D, and the same N_local for q, k and v.

    One small all-gather: the checks then agree on every rank, so no rank goes on into the ring
    or the all-to-all while another has raised (which would hang the group)."""
    local = [q.shape[0], q.shape[1], q.shape[2], q.shape[3], k.shape[1], k.shape[2], v.shape[1]]
    mine = torch.tensor(local, dtype=torch.int64, device=q.device)
    if world > 1:
        everyone = torch.empty(world * len(local), dtype=torch.int64, device=q.device)
        dist.all_gather_into_tensor(everyone, mine, group=group)
        rows = everyone.view(world, len(local)).tolist()
    else:
        rows = [local]
    for rank, row in enumerate(rows):
        for field, value, first in zip(_FIELDS, row, rows[0]):
            if value != first:
                name = {"Nk": "k", "Hkv": "k", "Nv": "v"}.get(field, "q")
                raise ValueError(
                    f"{name} has {field}={value} on rank {rank} but {field}={first} on rank 0; "
                    "context parallelism needs every rank to hold an equal slice (the same "
                    "B, H, Hkv, D and N_local)")
    nq, nk, nv = local[1], local[4], local[6]
    if nk != nq or nv != nq:
        name = "k" if nk != nq else "v"
        raise ValueError(
            f"{name} has N_local={nk if nk != nq else nv} but q has N_local={nq}; context "
            "parallelism needs q, k and v to be slices of the same sequence (equal N_local)")
