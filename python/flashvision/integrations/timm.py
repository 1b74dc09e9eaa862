"""Run the attention of timm ViT-family models on flashvision.

>>> model = timm.create_model("vit_base_patch16_224")
>>> flashvision.integrations.timm.patch(model)   # returns the number of blocks patched

``patch`` replaces, per instance, the forward of every timm ``Attention`` module (qkv Linear,
q_norm / k_norm, attn_drop, norm, optional gate, proj, proj_drop) with one that keeps q, k and v
as [B, N, H, D] views of the qkv projection and calls flashvision. Calls it cannot compute
exactly run timm's own forward instead: an attn_mask, and attention dropout in training mode.
Subclasses that override forward (RoPE, EVA, ...) are left alone. ``unpatch`` undoes it.
"""

import types

import timm.layers
import torch

from ..torch import _functional

_MARK = "_flashvision_patched"


def _attention_classes():
    """timm's standard attention class (where this timm version defines it)."""
    classes = []
    for module in (timm.layers, getattr(timm.models, "vision_transformer", None)):
        cls = getattr(module, "Attention", None)
        if isinstance(cls, type) and cls not in classes:
            classes.append(cls)
    return tuple(classes)


def _flash_forward(self, x, attn_mask=None, is_causal=False):
    """timm Attention.forward with the attention computed by flashvision."""
    original = type(self).forward
    if attn_mask is not None:
        return original(self, x, attn_mask=attn_mask, is_causal=is_causal)
    if self.training and self.attn_drop.p > 0:
        return original(self, x) if not is_causal else original(self, x, is_causal=True)
    gate_layer = getattr(self, "gate", None)
    gate = gate_layer(x).sigmoid() if gate_layer is not None else None
    qkv = self.qkv(x).unflatten(-1, (3, self.num_heads, self.head_dim))
    q, k, v = qkv.unbind(-3)
    # q_norm / k_norm normalize over head_dim only, so [B, N, H, D] order gives timm's result.
    q, k = self.q_norm(q), self.k_norm(k)
    # Self-attention: Nq == Nk, where timm's top-left causal mask equals flashvision's.
    out, _ = _functional.forward(q, k, v, scale=float(self.scale), causal=bool(is_causal),
                                 need_lse=False)
    out = out.flatten(-2)
    norm = getattr(self, "norm", None)
    if norm is not None:
        out = norm(out)
    if gate is not None:
        out = out * gate
    return self.proj_drop(self.proj(out))


def _patchable(module, classes):
    return (isinstance(module, classes)
            and any(type(module).forward is cls.forward for cls in classes)
            and not getattr(module, _MARK, False))


def patch(model: torch.nn.Module) -> int:
    """Makes every timm Attention module in `model` compute attention with flashvision, in
    place. Returns how many modules it patched (modules already patched are not counted)."""
    classes = _attention_classes()
    count = 0
    for module in model.modules():
        if _patchable(module, classes):
            module.forward = types.MethodType(_flash_forward, module)
            setattr(module, _MARK, True)
            count += 1
    return count


def unpatch(model: torch.nn.Module) -> int:
    """Restores timm's forward on the modules patch() changed; returns how many."""
    count = 0
    for module in model.modules():
        if getattr(module, _MARK, False):
            del module.forward
            delattr(module, _MARK)
            count += 1
    return count
