"""Attention layers of image models on flashvision: ViT-style self-attention and cross-attention.

Both keep q, k and v in the [B, N, H, D] order the projections produce, as strided views of the
projection outputs: no transpose or copy happens between the Linear layers and the kernel.
"""

import torch
from torch import nn

from . import _functional


def _split_heads(x, heads):
    """[B, N, heads * D] -> a [B, N, heads, D] view."""
    return x.unflatten(-1, (heads, x.shape[-1] // heads))


class SelfAttention(nn.Module):
    """Multi-head self-attention as in ViT: a fused qkv Linear, attention, an output Linear.

    Args:
        dim: token width C; must be a multiple of num_heads.
        num_heads: attention heads H (head dim C / H).
        qkv_bias: bias in the qkv projection.
        proj_bias: bias in the output projection.
        qk_norm: LayerNorm over the head dim of q and k (ViT-22B, DiT-style stabilisation).
        causal: bottom-right aligned causal mask (equal lengths here, so plain causal).
    """

    def __init__(self, dim, num_heads=8, *, qkv_bias=False, proj_bias=True, qk_norm=False,
                 causal=False, device=None, dtype=None):
        super().__init__()
        if dim % num_heads != 0:
            raise ValueError(f"dim is {dim}; expected a multiple of num_heads ({num_heads})")
        factory = {"device": device, "dtype": dtype}
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.causal = causal
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias, **factory)
        self.q_norm = nn.LayerNorm(self.head_dim, **factory) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim, **factory) if qk_norm else nn.Identity()
        self.proj = nn.Linear(dim, dim, bias=proj_bias, **factory)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, N, C] -> [B, N, C]."""
        qkv = self.qkv(x).unflatten(-1, (3, self.num_heads, self.head_dim))
        q, k, v = qkv.unbind(-3)
        q, k = self.q_norm(q), self.k_norm(k)
        out, _ = _functional.forward(q, k, v, scale=0.0, causal=self.causal, need_lse=False)
        return self.proj(out.flatten(-2))


class CrossAttention(nn.Module):
    """Multi-head cross-attention: queries from x, keys and values from a context sequence
    (text tokens of a diffusion U-Net, image tokens of a decoder).

    Args:
        dim: width of x; must be a multiple of num_heads.
        context_dim: width of the context (default: dim).
        num_heads: attention heads H (head dim dim / H).
        qkv_bias: bias in the q and kv projections.
        proj_bias: bias in the output projection.
    """

    def __init__(self, dim, context_dim=None, num_heads=8, *, qkv_bias=False, proj_bias=True,
                 device=None, dtype=None):
        super().__init__()
        if dim % num_heads != 0:
            raise ValueError(f"dim is {dim}; expected a multiple of num_heads ({num_heads})")
        factory = {"device": device, "dtype": dtype}
        self.num_heads = num_heads
        self.to_q = nn.Linear(dim, dim, bias=qkv_bias, **factory)
        self.to_kv = nn.Linear(context_dim or dim, 2 * dim, bias=qkv_bias, **factory)
        self.proj = nn.Linear(dim, dim, bias=proj_bias, **factory)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """x [B, N, C], context [B, M, context_dim] -> [B, N, C]."""
        q = _split_heads(self.to_q(x), self.num_heads)
        kv = self.to_kv(context).unflatten(-1, (2, self.num_heads, -1))
        k, v = kv.unbind(-3)
        out, _ = _functional.forward(q, k, v, scale=0.0, causal=False, need_lse=False)
        return self.proj(out.flatten(-2))
