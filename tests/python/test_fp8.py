"""flashvision.attention_fp8 and the bench's flashvision-fp8 row: argument errors and the bench
helpers everywhere; the FP8 forward itself against a float64 reference of the dequantized inputs
on a Hopper GPU (skipped elsewhere)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flashvision  # noqa: E402
import flashvision.torch as fvt  # noqa: E402
import fv_torch_reference as tref  # noqa: E402
from flashvision.bench import impls, records  # noqa: E402

FP8 = torch.float8_e4m3fn
E4M3_MAX = 448.0


def _quantized(gen, shape, device="cpu", amax=3.0):
    """(x8, descale, x): a random tensor x and its per-tensor e4m3 quantization."""
    x = torch.randn(shape, generator=gen).clamp(-amax, amax)
    x8, descale = fvt.quantize_fp8(x)
    return x8.to(device), descale, x


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


def _fp8_qkv(gen, device="cpu", shape=(1, 16, 2, 64)):
    return [_quantized(gen, shape, device)[0] for _ in range(3)]


def test_numpy_arrays_are_a_type_error():
    q = np.ones((1, 4, 2, 16), np.float32)
    with pytest.raises(TypeError, match="numpy has no float8"):
        flashvision.attention_fp8(q, q, q)


@pytest.mark.parametrize("entry", ["attention", "scaled_dot_product_attention",
                                   "flash_attn_func"])
def test_the_16_bit_entry_points_send_fp8_tensors_to_attention_fp8(gen, entry):
    call = getattr(flashvision if entry == "attention" else fvt, entry)
    with pytest.raises(TypeError, match="float8_e4m3fn: FP8 attention is .*attention_fp8"):
        call(*_fp8_qkv(gen))


@pytest.mark.parametrize("name", ["descale_q", "descale_k", "descale_v"])
@pytest.mark.parametrize("value, error, pattern", [
    (True, TypeError, "must be a float, got bool"),
    ("1", TypeError, "must be a float, got str"),
    (0.0, ValueError, "is 0.0; expected a finite number > 0"),
    (-2.0, ValueError, "is -2.0; expected"),
    (math.inf, ValueError, "is inf; expected"),
    (math.nan, ValueError, "is nan; expected"),
])
def test_bad_descales_name_the_argument(gen, name, value, error, pattern):
    with pytest.raises(error, match=f"^{name} {pattern}"):
        flashvision.attention_fp8(*_fp8_qkv(gen), **{name: value})


def test_the_layout_and_rank_are_checked(gen):
    q, k, v = _fp8_qkv(gen)
    with pytest.raises(ValueError, match="layout"):
        flashvision.attention_fp8(q, k, v, layout="sbhd")
    with pytest.raises(ValueError, match="q"):
        flashvision.attention_fp8(q[0], k[0], v[0])


def test_fp8_is_run_only_when_asked_for():
    assert "flashvision-fp8" not in impls.impls_for("cuda")
    assert impls.impls_for("cuda", opt_in=True)[:2] == ("flashvision", "flashvision-fp8")
    assert "flashvision-fp8" not in impls.impls_for("cpu", opt_in=True)


def test_the_fp8_row_is_never_a_peer():
    def record(impl, ms):
        return {"case": "c", "pass": "fwd", "impl": impl, "ms": ms}

    rows = [record("flashvision", 2.0), record("flashvision-fp8", 1.0), record("sdpa-cudnn", 3.0)]
    assert records.best_peer(rows, "c", "fwd")["impl"] == "sdpa-cudnn"
    assert records.speedup(rows, "c", "fwd") == (1.5, "sdpa-cudnn")
    assert records.speedup(rows, "c", "fwd", "flashvision-fp8") == (3.0, "sdpa-cudnn")


def test_the_fp8_row_quantizes_its_input_sets_before_any_call(monkeypatch):
    # A graph capture cannot read an amax back to the host: the sets are quantized up front.
    seen = []
    monkeypatch.setattr(fvt, "quantize_fp8", lambda x: seen.append(x) or (x, 1.0))
    sets = [SimpleNamespace(q=torch.ones(1), k=torch.ones(1), v=torch.ones(1)) for _ in range(3)]
    impls.forward_fn("flashvision-fp8", 0.125, sets)
    assert [id(x) for x in seen] == [id(x) for s in sets for x in (s.q, s.k, s.v)]


def test_quantize_fp8_scales_the_largest_magnitude_to_448(gen):
    x = torch.randn((3, 5, 7), generator=gen) * 5
    x8, descale = fvt.quantize_fp8(x)
    assert x8.dtype == FP8 and x8.shape == x.shape
    assert descale == pytest.approx(x.abs().max().item() / E4M3_MAX)
    assert x8.float().abs().max().item() == E4M3_MAX
    # e4m3 keeps 3 mantissa bits: a relative rounding error of at most 2^-4 on normal values.
    normal = x.abs() > 2 ** -6 * descale
    error = (x8.float() * descale - x).abs()[normal] / x.abs()[normal]
    assert error.max().item() <= 2 ** -4 + 1e-6


def test_quantize_fp8_of_zeros_has_descale_one():
    x8, descale = fvt.quantize_fp8(torch.zeros(4, dtype=torch.bfloat16))
    assert descale == 1.0 and not x8.float().any()


@pytest.mark.parametrize("x, error, pattern", [
    ([1.0], TypeError, "^x must be a torch.Tensor, got list"),
    (torch.ones(3, dtype=torch.int32), TypeError, "^x.dtype is torch.int32; expected a floating"),
    (torch.tensor([1.0, float("nan")]), ValueError, "^x holds nan; expected finite values"),
    (torch.tensor([float("-inf")]), ValueError, "^x holds inf; expected finite values"),
])
def test_quantize_fp8_refuses_what_it_cannot_scale(x, error, pattern):
    with pytest.raises(error, match=pattern):
        fvt.quantize_fp8(x)


def _why_no_fp8_forward():
    """Why the FP8 forward cannot run here, or None."""
    if not torch.cuda.is_available():
        return "no CUDA GPU"
    if torch.cuda.get_device_capability() != (9, 0):
        return "the FP8 forward needs a Hopper (sm_90) GPU"
    if "cuda-sm90" not in flashvision.compiled_backends():
        return "flashvision was built without the Hopper backend"
    return None


WHY_NO_FP8_FORWARD = _why_no_fp8_forward()
needs_fp8_forward = pytest.mark.skipif(WHY_NO_FP8_FORWARD is not None,
                                       reason=WHY_NO_FP8_FORWARD or "")


# The CPU forward rounds only O to bf16; the Hopper kernel rounds P to e4m3 as well.
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda, needs_fp8_forward])]


def _reference(quantized, layout, causal=False, scale=None):
    """float64 attention of the dequantized tensors (q, k, v as float64)."""
    q, k, v = (x8.to(torch.float64) * s for x8, s, _ in quantized)
    attend = tref.attention_bhsd if layout == "bhsd" else tref.attention_bshd
    return attend(q, k, v, scale=scale, causal=causal)


def _assert_fp8_close(out, expected, what):
    """On the GPU within 2^-4 of the output's scale, at least 0.5: the probabilities are rounded
    to e4m3 (3 mantissa bits) before the second GEMM, and their errors follow the terms p |v|
    rather than the output that long random rows average down (as the C++ tests' tolerance). On
    the CPU, bf16's rounding of O."""
    assert out.dtype == torch.bfloat16
    assert not torch.isnan(out).any(), f"{what}: NaN (an element left unwritten?)"
    if out.is_cuda:
        bound = 1e-3 + 2 ** -4 * max(expected.abs().max().item(), 0.5)
        tref.assert_close(out, expected, bound, 0, what)
    else:
        tref.assert_close(out, expected, 1e-3, 2 ** -7, what)


FP8_SHAPES = [  # (B, H, Hkv, Nq, Nk, D)
    (2, 4, 4, 197, 197, 64),
    (1, 4, 2, 300, 77, 128),
    (1, 2, 1, 1000, 1000, 128),
    (1, 2, 2, 129, 255, 256),
    (3, 3, 3, 64, 90, 80),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("shape", FP8_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_forward_matches_the_dequantized_reference(gen, shape, layout, device):
    b, h, hkv, nq, nk, d = shape
    q_shape, kv_shape = ((b, h, nq, d), (b, hkv, nk, d)) if layout == "bhsd" else \
        ((b, nq, h, d), (b, nk, hkv, d))
    quantized = [_quantized(gen, s, device) for s in (q_shape, kv_shape, kv_shape)]
    (q8, sq, _), (k8, sk, _), (v8, sv, _) = quantized
    out, lse = flashvision.attention_fp8(q8, k8, v8, descale_q=sq, descale_k=sk, descale_v=sv,
                                         layout=layout, return_lse=True)
    assert out.device == q8.device and out.shape == q8.shape
    _assert_fp8_close(out, _reference(quantized, layout), "out")
    assert lse.shape == (b, h, nq) and lse.dtype == torch.float32
    q, k, v = (x8.to(torch.float64) * s for x8, s, _ in quantized)
    if layout == "bshd":
        q, k = q.transpose(1, 2), k.transpose(1, 2)
    k = k.repeat_interleave(h // hkv, dim=1)
    expected_lse = torch.logsumexp(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
    tref.assert_close(lse, expected_lse, 2e-3, 2e-3, "lse")


@pytest.mark.parametrize("device", DEVICES)
def test_causal_and_scale(gen, device):
    quantized = [_quantized(gen, (1, 256, 2, 64), device) for _ in range(3)]
    (q8, sq, _), (k8, sk, _), (v8, sv, _) = quantized
    out = flashvision.attention_fp8(q8, k8, v8, descale_q=sq, descale_k=sk, descale_v=sv,
                                    causal=True, scale=0.3)
    _assert_fp8_close(out, _reference(quantized, "bshd", causal=True, scale=0.3), "out")


def test_opcheck_fwd_fp8(gen):
    # Not opcheck's schema test: it compares its inputs by arithmetic torch has no float8 for.
    (q8, sq, _), (k8, sk, _), (v8, sv, _) = (_quantized(gen, (2, 33, 2, 16)) for _ in range(3))
    torch.library.opcheck(torch.ops.flashvision.fwd_fp8.default,
                          (q8, k8, v8, 0.25, False, sq, sk, sv),
                          test_utils=("test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_under_torch_compile(gen, device):
    torch._dynamo.reset()
    quantized = [_quantized(gen, (2, 4, 150, 128), device) for _ in range(3)]
    (q8, sq, _), (k8, sk, _), (v8, sv, _) = quantized

    @torch.compile(fullgraph=True)
    def attend(q, k, v):
        return flashvision.attention_fp8(q, k, v, descale_q=sq, descale_k=sk, descale_v=sv,
                                         layout="bhsd")

    out = attend(q8, k8, v8)
    _assert_fp8_close(out, _reference(quantized, "bhsd"), "out under torch.compile")
