"""timm and diffusers models on CUDA tensors in half precision, patched against unpatched (random
weights, nothing downloaded). Half precision makes both sides inexact, so each is judged against
the same model in float32: flashvision's error may be at most twice torch's own plus a small
floor. Skipped without a GPU or without a CUDA build."""

import pytest

torch = pytest.importorskip("torch")

import fv_torch_reference as tref  # noqa: E402
from fv_torch_support import count_flashvision_calls, cuda_module_marks  # noqa: E402

pytestmark = cuda_module_marks()


@pytest.fixture
def gen(seed):
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def _max_error(out, reference):
    return (out.double() - reference.double()).abs().max().item()


def _assert_as_accurate_as_torch(out, expected, reference, what):
    """out (flashvision, half) no further from the float32 reference than 2x expected (torch, half)
    plus 1 % of the reference's magnitude."""
    assert torch.isfinite(out).all(), f"{what}: non-finite values"
    torch_error = _max_error(expected, reference)
    ours = _max_error(out, reference)
    floor = 0.01 * reference.double().abs().max().item()
    assert ours <= 2 * torch_error + floor, (
        f"{what}: flashvision's error {ours:.3g} against float32, torch's own {torch_error:.3g}")


def test_timm_vit_b16_bf16(gen, monkeypatch):
    timm = pytest.importorskip("timm")
    from flashvision.integrations import timm as fv_timm

    calls = count_flashvision_calls(monkeypatch, fv_timm)
    model = timm.create_model("vit_base_patch16_224", pretrained=False).eval().cuda()
    x = tref.randn(gen, (4, 3, 224, 224), device="cuda")
    with torch.no_grad():
        reference = model(x)
        model = model.to(torch.bfloat16)
        expected = model(x.bfloat16())
        assert fv_timm.patch(model) == 12
        out = model(x.bfloat16())
    _assert_as_accurate_as_torch(out, expected, reference, "ViT-B/16 logits")
    assert len(calls) == 12


def test_timm_tiny_vit_gradients_bf16(gen):
    timm = pytest.importorskip("timm")
    from flashvision.integrations import timm as fv_timm

    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=64,
                              patch_size=8).train().cuda()
    x = tref.randn(gen, (2, 3, 64, 64), device="cuda")
    reference = model(x).float()
    reference_grads = torch.autograd.grad(reference.square().sum(), list(model.parameters()))
    model = model.to(torch.bfloat16)
    expected = model(x.bfloat16())
    expected_grads = torch.autograd.grad(expected.float().square().sum(), list(model.parameters()))
    fv_timm.patch(model)
    out = model(x.bfloat16())
    grads = torch.autograd.grad(out.float().square().sum(), list(model.parameters()))
    _assert_as_accurate_as_torch(out, expected, reference, "logits")
    for index, (got, want, ref) in enumerate(zip(grads, expected_grads, reference_grads)):
        _assert_as_accurate_as_torch(got, want, ref, f"gradient of parameter {index}")


def _compare_processors(model, run, reference_run):
    from diffusers.models.attention_processor import AttnProcessor2_0

    from flashvision.integrations.diffusers import FlashVisionAttnProcessor

    with torch.no_grad():
        reference = reference_run()
        model.set_attn_processor(AttnProcessor2_0())
        expected = run()
        model.set_attn_processor(FlashVisionAttnProcessor())
        out = run()
    return out, expected, reference


def test_diffusers_unet2d_condition_fp16(gen, monkeypatch):
    diffusers = pytest.importorskip("diffusers")
    from flashvision.integrations import diffusers as fv_diffusers

    calls = count_flashvision_calls(monkeypatch, fv_diffusers)
    unet = diffusers.UNet2DConditionModel(
        sample_size=32, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(64, 128), norm_num_groups=8, cross_attention_dim=48,
        attention_head_dim=8, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")).eval().cuda()
    sample = tref.randn(gen, (2, 4, 32, 32), device="cuda")
    context = tref.randn(gen, (2, 77, 48), device="cuda")
    timestep = torch.tensor([10, 700], device="cuda")
    with torch.no_grad():
        reference = unet(sample, timestep, context).sample
    unet = unet.half()
    out, expected, _ = _compare_processors(
        unet, lambda: unet(sample.half(), timestep, context.half()).sample, lambda: reference)
    _assert_as_accurate_as_torch(out, expected, reference, "UNet output")
    assert len(calls) == len(unet.attn_processors) == 8


def test_diffusers_dit_transformer_bf16(gen):
    diffusers = pytest.importorskip("diffusers")
    from flashvision.integrations import diffusers as fv_diffusers

    dit = diffusers.DiTTransformer2DModel(
        num_attention_heads=4, attention_head_dim=72, in_channels=4, num_layers=2,
        sample_size=32, patch_size=2, norm_num_groups=4).eval().cuda()
    sample = tref.randn(gen, (2, 4, 32, 32), device="cuda")
    timestep = torch.tensor([3, 500], device="cuda")
    labels = torch.tensor([1, 7], device="cuda")
    with torch.no_grad():
        reference = dit(sample, timestep=timestep, class_labels=labels).sample
        dit = dit.to(torch.bfloat16)
        expected = dit(sample.bfloat16(), timestep=timestep, class_labels=labels).sample
        assert fv_diffusers.patch(dit) == 2
        out = dit(sample.bfloat16(), timestep=timestep, class_labels=labels).sample
    _assert_as_accurate_as_torch(out, expected, reference, "DiT output")
