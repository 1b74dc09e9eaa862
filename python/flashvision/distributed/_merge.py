"""Exact merge of attention over disjoint key blocks through their log-sum-exp."""

import torch


def merge_into(out_acc, lse_acc, out, lse):
    """Folds (out, lse) of one key block into the running (out_acc, lse_acc), in place.

    out_acc [B, N, H, D] float32, lse_acc [B, H, N] float32; out [B, N, H, D], lse [B, H, N].
    With lse' = log(exp(lse_acc) + exp(lse)), out' = exp(lse_acc - lse') out_acc +
    exp(lse - lse') out. Rows that see no key so far (lse = -inf on both sides) stay at out 0,
    lse -inf instead of becoming NaN (exp(-inf - -inf))."""
    merged = torch.logaddexp(lse_acc, lse)
    finite = torch.where(torch.isneginf(merged), torch.zeros_like(merged), merged)
    keep = torch.exp(lse_acc - finite).transpose(1, 2).unsqueeze(-1)
    take = torch.exp(lse - finite).transpose(1, 2).unsqueeze(-1)
    out_acc.mul_(keep).add_(out.to(torch.float32) * take)
    lse_acc.copy_(merged)
