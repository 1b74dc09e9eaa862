"""timm and diffusers integrations: patched models against their own attention (random weights,
tiny configs where possible, nothing downloaded)."""

import pytest

torch = pytest.importorskip("torch")

import fv_torch_reference as tref  # noqa: E402
from fv_torch_support import count_flashvision_calls  # noqa: E402


@pytest.fixture
def gen(seed):
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- timm


@pytest.fixture
def timm():
    return pytest.importorskip("timm", reason="timm is not installed (pip install timm)")


@pytest.mark.slow
def test_timm_vit_b16_patched_matches_unpatched(gen, timm, monkeypatch):
    from flashvision.integrations import timm as fv_timm

    calls = count_flashvision_calls(monkeypatch, fv_timm)

    model = timm.create_model("vit_base_patch16_224", pretrained=False).eval()
    x = tref.randn(gen, (1, 3, 224, 224))
    with torch.no_grad():
        expected = model(x)
        assert fv_timm.patch(model) == 12
        assert fv_timm.patch(model) == 0, "patching twice must not patch again"
        out = model(x)
    tref.assert_close(out, expected, 1e-4, 1e-4, "logits")
    assert len(calls) == 12


def _tiny_vit(timm, **kwargs):
    return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8,
                             **kwargs)


def test_timm_qk_norm_gradients_match(gen, timm):
    from flashvision.integrations import timm as fv_timm

    model = _tiny_vit(timm, qk_norm=True).train()
    x = tref.randn(gen, (2, 3, 32, 32))
    expected = model(x)
    expected_grads = torch.autograd.grad(expected.square().sum(), list(model.parameters()))
    assert fv_timm.patch(model) == len(model.blocks)
    out = model(x)
    grads = torch.autograd.grad(out.square().sum(), list(model.parameters()))
    tref.assert_close(out, expected, 1e-4, 1e-4, "logits")
    for index, (got, want) in enumerate(zip(grads, expected_grads)):
        tref.assert_close(got, want, 1e-4, 1e-3, f"gradient of parameter {index}")
    assert fv_timm.unpatch(model) == len(model.blocks)
    tref.assert_close(model(x), expected, 0, 0, "logits after unpatch")


def test_timm_attention_dropout_in_training_falls_back(gen, timm):
    from flashvision.integrations import timm as fv_timm

    model = _tiny_vit(timm, attn_drop_rate=0.2).train()
    x = tref.randn(gen, (1, 3, 32, 32))
    torch.manual_seed(1)
    expected = model(x)
    fv_timm.patch(model)
    torch.manual_seed(1)
    tref.assert_close(model(x), expected, 0, 0, "logits with attention dropout")


def test_timm_is_causal_and_mask_arguments(gen, timm):
    from flashvision.integrations import timm as fv_timm

    attention = timm.layers.Attention(32, num_heads=4).eval()
    x = tref.randn(gen, (2, 9, 32))
    mask = torch.rand(9, 9, generator=gen) > 0.3
    mask.fill_diagonal_(True)
    expected = [attention(x, is_causal=True), attention(x, attn_mask=mask)]
    fv_timm.patch(attention)
    tref.assert_close(attention(x, is_causal=True), expected[0], 1e-5, 1e-5, "causal")
    tref.assert_close(attention(x, attn_mask=mask), expected[1], 0, 0, "masked (fallback)")


# ---------------------------------------------------------------- diffusers


@pytest.fixture
def diffusers():
    return pytest.importorskip("diffusers",
                               reason="diffusers is not installed (pip install diffusers)")


def _compare_processors(model, run, atol=1e-4):
    from diffusers.models.attention_processor import AttnProcessor2_0

    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    with torch.no_grad():
        model.set_attn_processor(AttnProcessor2_0())
        expected = run()
        model.set_attn_processor(FlashVisionAttnProcessor())
        out = run()
    assert all(isinstance(p, FlashVisionAttnProcessor) for p in model.attn_processors.values())
    tref.assert_close(out, expected, atol, atol, "output")


def test_diffusers_unet2d_condition(gen, diffusers, monkeypatch):
    from flashvision.integrations import diffusers as fv_diffusers

    calls = count_flashvision_calls(monkeypatch, fv_diffusers)
    unet = diffusers.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(32, 64), norm_num_groups=8, cross_attention_dim=24,
        attention_head_dim=8, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")).eval()
    sample, context = tref.randn(gen, (2, 4, 16, 16)), tref.randn(gen, (2, 7, 24))
    timestep = torch.tensor([10, 700])
    _compare_processors(unet, lambda: unet(sample, timestep, context).sample)
    assert len(calls) == len(unet.attn_processors) == 8


def test_diffusers_dit_transformer_via_patch(gen, diffusers):
    from diffusers.models.attention_processor import AttnProcessor2_0

    from flashvision.integrations import diffusers as fv_diffusers

    dit = diffusers.DiTTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, num_layers=2,
        sample_size=8, patch_size=2, norm_num_groups=4).eval()
    sample = tref.randn(gen, (2, 4, 8, 8))
    timestep, labels = torch.tensor([3, 500]), torch.tensor([1, 7])
    with torch.no_grad():
        assert all(isinstance(m.processor, AttnProcessor2_0) for m in _attention_modules(dit))
        expected = dit(sample, timestep=timestep, class_labels=labels).sample
        assert fv_diffusers.patch(dit) == 2
        out = dit(sample, timestep=timestep, class_labels=labels).sample
    tref.assert_close(out, expected, 1e-4, 1e-4, "output")


def _attention_modules(model):
    from diffusers.models.attention_processor import Attention

    return [m for m in model.modules() if isinstance(m, Attention)]


def test_diffusers_pixart_transformer(gen, diffusers):
    pixart = diffusers.PixArtTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4,
        num_layers=2, cross_attention_dim=16, sample_size=8, patch_size=2, caption_channels=12,
        norm_num_groups=4).eval()
    sample, caption = tref.randn(gen, (2, 4, 8, 8)), tref.randn(gen, (2, 6, 12))
    timestep = torch.tensor([3, 500])
    conditions = {"resolution": None, "aspect_ratio": None}
    _compare_processors(pixart, lambda: pixart(sample, caption, timestep,
                                               added_cond_kwargs=conditions).sample)


def test_diffusers_vae_group_norm_residual(gen, diffusers):
    vae = diffusers.AutoencoderKL(block_out_channels=(32,), norm_num_groups=8,
                                  latent_channels=4).eval()
    image = tref.randn(gen, (1, 3, 16, 16))
    _compare_processors(vae, lambda: vae(image, sample_posterior=False).sample)


def _attention(diffusers, **kwargs):
    from diffusers.models.attention_processor import Attention

    return Attention(**kwargs).eval()


@pytest.mark.parametrize("config, reference", [
    (dict(query_dim=32, heads=4, dim_head=8, cross_attention_dim=20,
          cross_attention_norm="layer_norm"), "AttnProcessor2_0"),
    (dict(query_dim=32, heads=2, dim_head=16, qk_norm="layer_norm", bias=True),
     "AttnProcessor2_0"),
    (dict(query_dim=32, heads=4, dim_head=8, residual_connection=True, rescale_output_factor=2.0,
          norm_num_groups=4, spatial_norm_dim=6), "AttnProcessor2_0"),
    # AttnProcessor2_0 ignores attn.scale; AttnProcessor honours it, as flashvision does.
    (dict(query_dim=32, heads=4, dim_head=8, scale_qk=False), "AttnProcessor"),
], ids=["norm_cross", "qk_norm", "spatial_group_norm_residual", "scale_qk_false"])
def test_diffusers_attention_options(gen, diffusers, config, reference):
    from diffusers.models import attention_processor

    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    attn = _attention(diffusers, **config)
    spatial = config.get("spatial_norm_dim")
    x = tref.randn(gen, (2, config["query_dim"], 4, 4) if spatial else (2, 12, config["query_dim"]))
    context = (tref.randn(gen, (2, 5, config["cross_attention_dim"]))
               if "cross_attention_dim" in config else None)
    temb = tref.randn(gen, (2, spatial, 2, 2)) if spatial else None
    outputs = []
    for processor in (getattr(attention_processor, reference)(), FlashVisionAttnProcessor()):
        attn.set_processor(processor)
        with torch.no_grad():
            outputs.append(attn(x, context, temb=temb) if spatial else attn(x, context))
    tref.assert_close(outputs[1], outputs[0], 1e-5, 1e-5, f"output against {reference}")


def _manual_attention(attn, x, context, heads_kv):
    """The block computed by hand: across-heads norms before the head split, GQA heads."""
    q, k, v = attn.to_q(x), attn.to_k(context), attn.to_v(context)
    q, k = attn.norm_q(q), attn.norm_k(k)
    d = q.shape[-1] // attn.heads
    out = tref.attention_bshd(q.unflatten(-1, (attn.heads, d)), k.unflatten(-1, (heads_kv, d)),
                              v.unflatten(-1, (heads_kv, d)), scale=attn.scale)
    return attn.to_out[1](attn.to_out[0](out.flatten(-2)))


def test_diffusers_kv_heads_and_norm_across_heads(gen, diffusers):
    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    attn = _attention(diffusers, query_dim=32, heads=4, kv_heads=2, dim_head=8,
                      qk_norm="rms_norm_across_heads",
                      processor=FlashVisionAttnProcessor())
    x = tref.randn(gen, (2, 10, 32))
    with torch.no_grad():
        tref.assert_close(attn(x), _manual_attention(attn, x, x, 2), 1e-5, 1e-5, "output")


def test_diffusers_attention_mask_falls_back_to_torch(gen, diffusers):
    from diffusers.models.attention_processor import AttnProcessor2_0

    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    attn = _attention(diffusers, query_dim=16, heads=2, dim_head=8, cross_attention_dim=12)
    x, context = tref.randn(gen, (2, 6, 16)), tref.randn(gen, (2, 5, 12))
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    with torch.no_grad():
        expected = AttnProcessor2_0()(attn, x, context, attention_mask=mask)
        out = FlashVisionAttnProcessor()(attn, x, context, attention_mask=mask)
    tref.assert_close(out, expected, 1e-6, 1e-6, "masked output")


def test_diffusers_added_kv_projections_are_refused(gen, diffusers):
    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    attn = _attention(diffusers, query_dim=16, heads=2, dim_head=8, added_kv_proj_dim=12)
    with pytest.raises(NotImplementedError, match=r"attn.added_kv_proj_dim is 12"):
        FlashVisionAttnProcessor()(attn, tref.randn(gen, (1, 4, 16)), tref.randn(gen, (1, 3, 12)))


def test_diffusers_processor_gradients(gen, diffusers):
    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    attn = _attention(diffusers, query_dim=16, heads=2, dim_head=8)
    x = tref.randn(gen, (2, 7, 16), requires_grad=True)
    expected = torch.autograd.grad(attn(x).square().sum(), x)[0]
    attn.set_processor(FlashVisionAttnProcessor())
    got = torch.autograd.grad(attn(x).square().sum(), x)[0]
    tref.assert_close(got, expected, 1e-4, 1e-4, "dx")
