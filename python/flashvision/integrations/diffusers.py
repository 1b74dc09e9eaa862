"""An attention processor that runs diffusers' ``Attention`` blocks on flashvision.

>>> from flashvision.integrations.diffusers import FlashVisionAttnProcessor
>>> unet.set_attn_processor(FlashVisionAttnProcessor())
>>> flashvision.integrations.diffusers.patch(dit)  # models without set_attn_processor

It follows what diffusers' default processor (AttnProcessor2_0) does around the attention itself:
spatial_norm, [B, C, H, W] inputs, group_norm, norm_cross, norm_q / norm_k (per head or across
heads), to_out, residual_connection and rescale_output_factor; key/value heads may be fewer than
query heads (kv_heads). The softmax scale is ``attn.scale`` (which AttnProcessor2_0 ignores; it
is 1/sqrt(head_dim) unless the block was built with scale_qk=False).

Calls flashvision cannot compute exactly fall back to torch's scaled_dot_product_attention, so
results never silently change: an attention_mask, and ``attn.is_causal`` with different query
and key lengths. Blocks with added key/value projections (joint attention of SD3-style MMDiTs,
UnCLIP) need their own processors and raise NotImplementedError.
"""

import math

import torch
import torch.nn.functional as F
from diffusers.models.attention_processor import Attention

from ..torch import _functional


def _normalized_size(norm):
    """Number of features a norm layer normalizes over, or None when it works on any last dim."""
    shape = getattr(norm, "normalized_shape", None)
    if shape is None:
        shape = getattr(norm, "dim", None)
    if isinstance(shape, (tuple, list, torch.Size)):
        return math.prod(shape)
    return None


def _project_heads(x, heads, head_dim, norm):
    """[B, N, heads * head_dim] -> [B, N, heads, head_dim] with the block's q/k norm applied.

    A norm over head_dim acts on the last dimension alone, so it gives the same result in this
    order as in diffusers' [B, heads, N, head_dim]; a norm "across heads" acts before the split.
    """
    if norm is not None and heads > 1 and _normalized_size(norm) == heads * head_dim:
        x = norm(x)
        norm = None
    x = x.unflatten(-1, (heads, head_dim))
    return x if norm is None else norm(x)


def _torch_sdpa(query, key, value, attention_mask, is_causal, scale):
    """The fallback: torch's SDPA on [B, N, H, D] tensors (heads repeated for kv_heads)."""
    query, key, value = (x.transpose(1, 2) for x in (query, key, value))
    group = query.shape[1] // key.shape[1]
    if group > 1:
        key, value = key.repeat_interleave(group, 1), value.repeat_interleave(group, 1)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask,
                                         is_causal=is_causal, scale=scale)
    return out.transpose(1, 2)


class FlashVisionAttnProcessor:
    """diffusers attention processor on flashvision (self- and cross-attention, any backend
    flashvision has for the tensors' device)."""

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None,
                 temb=None, *args, **kwargs):
        if getattr(attn, "added_kv_proj_dim", None) is not None:
            raise NotImplementedError(
                f"attn.added_kv_proj_dim is {attn.added_kv_proj_dim}: blocks with added key/value "
                "projections (joint attention) need their own processor; FlashVisionAttnProcessor "
                "handles self- and cross-attention blocks")
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        image_shape = None
        if hidden_states.ndim == 4:
            image_shape = hidden_states.shape
            hidden_states = hidden_states.flatten(2).transpose(1, 2)
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        batch = hidden_states.shape[0]
        if attention_mask is not None:
            attention_mask = attn.prepare_attention_mask(attention_mask, context.shape[1], batch)
            attention_mask = attention_mask.view(batch, attn.heads, -1, attention_mask.shape[-1])
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        if encoder_hidden_states is None:
            context = hidden_states
        elif attn.norm_cross:
            context = attn.norm_encoder_hidden_states(context)

        query, key, value = attn.to_q(hidden_states), attn.to_k(context), attn.to_v(context)
        head_dim = query.shape[-1] // attn.heads
        heads_kv = key.shape[-1] // head_dim
        query = _project_heads(query, attn.heads, head_dim, attn.norm_q)
        key = _project_heads(key, heads_kv, head_dim, attn.norm_k)
        value = value.unflatten(-1, (heads_kv, head_dim))

        scale = float(getattr(attn, "scale", head_dim ** -0.5))
        causal = bool(getattr(attn, "is_causal", False))
        if attention_mask is not None or (causal and query.shape[1] != key.shape[1]):
            out = _torch_sdpa(query, key, value, attention_mask, causal, scale)
        else:
            out, _ = _functional.forward(query, key, value, scale=scale, causal=causal,
                                         need_lse=False)
        hidden_states = out.flatten(2).to(query.dtype)

        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        if image_shape is not None:
            hidden_states = hidden_states.transpose(1, 2).reshape(image_shape)
        if attn.residual_connection:
            hidden_states = hidden_states + residual
        return hidden_states / attn.rescale_output_factor


def patch(model: torch.nn.Module) -> int:
    """Sets a FlashVisionAttnProcessor on every self- or cross-attention block of `model` (for
    models such as DiTTransformer2DModel that have no set_attn_processor); blocks with added
    key/value projections keep their processor. Returns how many blocks it set."""
    processor = FlashVisionAttnProcessor()
    count = 0
    for module in model.modules():
        if isinstance(module, Attention) and getattr(module, "added_kv_proj_dim", None) is None:
            module.set_processor(processor)
            count += 1
    return count
