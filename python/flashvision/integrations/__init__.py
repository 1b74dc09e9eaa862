"""Drop-in integrations with model libraries (each imports its library only when imported):

- ``flashvision.integrations.timm.patch(model)``: timm ViT-family attention on flashvision.
- ``flashvision.integrations.diffusers.FlashVisionAttnProcessor``: an attention processor for
  diffusers' ``set_attn_processor`` (U-Nets and transformers).
"""
