"""The PyTorch API on CPU tensors: forward and gradients against float64 references, the
custom ops (opcheck), torch.compile, the layers, and argument errors."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

import flashvision  # noqa: E402
import flashvision.torch as fvt  # noqa: E402
import fv_torch_reference as tref  # noqa: E402


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


DTYPES = [torch.float32, torch.float16, torch.bfloat16]

# (B, H, Hkv, Nq, Nk, D) in SDPA order.
SDPA_SHAPES = [
    (1, 1, 1, 1, 1, 8),
    (2, 4, 4, 17, 17, 32),
    (1, 6, 2, 64, 64, 64),
    (2, 3, 3, 7, 45, 40),
    (1, 2, 1, 97, 31, 80),
]


def _sdpa_inputs(gen, shape, dtype, requires_grad=False):
    b, h, hkv, nq, nk, d = shape
    return (tref.randn(gen, (b, h, nq, d), dtype, requires_grad=requires_grad),
            tref.randn(gen, (b, hkv, nk, d), dtype, requires_grad=requires_grad),
            tref.randn(gen, (b, hkv, nk, d), dtype, requires_grad=requires_grad))


def _with_causal(shapes):
    """(shape, causal) pairs; causal only where Nq == Nk, where SDPA's mask equals ours."""
    return [pytest.param(s, c, id="x".join(map(str, s)) + ("-causal" if c else ""))
            for s in shapes for c in (False, True) if not c or s[3] == s[4]]


def test_submodules_reached_from_the_package_alone():
    import subprocess
    import sys

    code = ("import torch, flashvision\n"
            "q = torch.randn(1, 2, 5, 8)\n"
            "out = flashvision.torch.scaled_dot_product_attention(q, q, q)\n"
            "ref = torch.nn.functional.scaled_dot_product_attention(q, q, q)\n"
            "assert (out - ref).abs().max().item() < 1e-5, 'flashvision.torch differs from SDPA'\n"
            "assert flashvision.integrations.__name__ == 'flashvision.integrations'\n"
            "try:\n"
            "    flashvision.no_such_name\n"
            "except AttributeError as e:\n"
            "    assert 'no_such_name' in str(e), e\n"
            "else:\n"
            "    raise SystemExit('flashvision.no_such_name did not raise')\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, causal", _with_causal(SDPA_SHAPES))
def test_sdpa_forward_as_accurate_as_torch(gen, dtype, shape, causal):
    q, k, v = _sdpa_inputs(gen, shape, dtype)
    gqa = shape[1] != shape[2]
    ours = fvt.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    assert ours.shape == q.shape and ours.dtype == dtype and ours.is_contiguous()
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    reference = tref.attention_bhsd(*(tref.float64_leaf(x) for x in (q, k, v)), causal=causal)
    tref.assert_as_accurate_as_torch(ours, theirs, reference, "out")


@pytest.mark.parametrize("shape", [(1, 2, 2, 9, 13, 16), (2, 4, 2, 16, 16, 32),
                                   (1, 3, 1, 20, 7, 8)], ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_gradients_match_float64(gen, shape, causal):
    """fp32 gradients against float64 autograd of the math reference (gradcheck needs f64)."""
    if causal and shape[3] != shape[4]:
        causal = False
    q, k, v = _sdpa_inputs(gen, shape, torch.float32, requires_grad=True)
    out = fvt.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    grad_out = tref.randn(gen, out.shape)
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    q64, k64, v64 = (tref.float64_leaf(x) for x in (q, k, v))
    reference = tref.attention_bhsd(q64, k64, v64, causal=causal)
    expected = torch.autograd.grad(reference, (q64, k64, v64), grad_out.double())
    tref.assert_close(out, reference, 2e-5, 2e-5, "out")
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        tref.assert_close(got, want, 1e-4, 1e-4, name)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_low_precision_gradients_as_accurate_as_torch(gen, dtype):
    q, k, v = _sdpa_inputs(gen, (2, 4, 4, 33, 33, 64), dtype, requires_grad=True)
    grad_out = tref.randn(gen, q.shape, dtype)
    ours = torch.autograd.grad(fvt.scaled_dot_product_attention(q, k, v), (q, k, v), grad_out)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v), (q, k, v), grad_out)
    q64, k64, v64 = (tref.float64_leaf(x) for x in (q, k, v))
    expected = torch.autograd.grad(tref.attention_bhsd(q64, k64, v64), (q64, k64, v64),
                                   grad_out.double())
    for name, a, b, e in zip(("dq", "dk", "dv"), ours, theirs, expected):
        tref.assert_as_accurate_as_torch(a, b, e, name)


def test_sdpa_unbatched_and_scale(gen):
    q, k, v = (tref.randn(gen, (3, 10, 16)) for _ in range(3))
    out = fvt.scaled_dot_product_attention(q, k, v, scale=0.3)
    tref.assert_close(out, tref.attention_bhsd(q[None], k[None], v[None], scale=0.3)[0], 2e-5,
                      2e-5, "out")


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attn_func_bottom_right_causal_and_gqa(gen, causal):
    q = tref.randn(gen, (2, 11, 4, 32), requires_grad=True)
    k = tref.randn(gen, (2, 19, 2, 32), requires_grad=True)
    v = tref.randn(gen, (2, 19, 2, 32), requires_grad=True)
    out = fvt.flash_attn_func(q, k, v, causal=causal, softmax_scale=0.2)
    q64, k64, v64 = (tref.float64_leaf(x) for x in (q, k, v))
    reference = tref.attention_bshd(q64, k64, v64, scale=0.2, causal=causal)
    tref.assert_close(out, reference, 2e-5, 2e-5, "out")
    grad_out = tref.randn(gen, out.shape)
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    expected = torch.autograd.grad(reference, (q64, k64, v64), grad_out.double())
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        tref.assert_close(got, want, 1e-4, 1e-4, name)


def test_flash_attn_varlen_func(gen):
    q_lens, k_lens = [5, 12, 1], [7, 12, 9]
    cu_q = torch.tensor([0, *np.cumsum(q_lens)], dtype=torch.int32)
    cu_k = torch.tensor([0, *np.cumsum(k_lens)], dtype=torch.int32)
    q = tref.randn(gen, (sum(q_lens), 4, 16), requires_grad=True)
    k = tref.randn(gen, (sum(k_lens), 2, 16), requires_grad=True)
    v = tref.randn(gen, (sum(k_lens), 2, 16), requires_grad=True)
    out = fvt.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(q_lens), max(k_lens), causal=True)
    grad_out = tref.randn(gen, out.shape)
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    q64, k64, v64 = (tref.float64_leaf(x) for x in (q, k, v))
    pieces = []
    for b in range(len(q_lens)):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        pieces.append(tref.attention_bshd(q64[None, qs], k64[None, ks], v64[None, ks],
                                          causal=True)[0])
    reference = torch.cat(pieces)
    expected = torch.autograd.grad(reference, (q64, k64, v64), grad_out.double())
    tref.assert_close(out, reference, 2e-5, 2e-5, "out")
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        tref.assert_close(got, want, 1e-4, 1e-4, name)


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_attention_frontend_on_torch(gen, layout):
    shape = (2, 9, 3, 16) if layout == "bshd" else (2, 3, 9, 16)
    q, k, v = (tref.randn(gen, shape, requires_grad=True) for _ in range(3))
    out, lse = flashvision.attention(q, k, v, layout=layout, return_lse=True)
    assert isinstance(out, torch.Tensor) and out.shape == q.shape and out.is_contiguous()
    assert lse.shape == (2, 3, 9) and lse.dtype == torch.float32 and not lse.requires_grad
    grad_out = tref.randn(gen, out.shape)
    expected = torch.autograd.grad(out, (q, k, v), grad_out)
    grads = flashvision.attention_backward(grad_out, q, k, v, out, lse, layout=layout)
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        assert got.shape == want.shape
        tref.assert_close(got, want, 0, 0, name)
    to_bhsd = (lambda x: x.transpose(1, 2)) if layout == "bshd" else (lambda x: x)
    q64, k64 = tref.float64_leaf(q), tref.float64_leaf(k)
    s = to_bhsd(q64) @ to_bhsd(k64).transpose(-1, -2) / math.sqrt(16)
    tref.assert_close(lse, torch.logsumexp(s, -1), 1e-5, 1e-5, "lse")


def test_attention_varlen_frontend_on_torch(gen):
    cu = torch.tensor([0, 3, 10], dtype=torch.int32)
    q, k, v = (tref.randn(gen, (10, 2, 8), requires_grad=True) for _ in range(3))
    out, lse = flashvision.attention_varlen(q, k, v, cu, cu, return_lse=True)
    assert lse.shape == (2, 10)
    grad_out = tref.randn(gen, out.shape)
    expected = torch.autograd.grad(out, (q, k, v), grad_out)
    grads = flashvision.attention_varlen_backward(grad_out, q, k, v, out, lse, cu, cu)
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        tref.assert_close(got, want, 0, 0, name)


def test_self_attention_layer(gen):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    layer = fvt.SelfAttention(48, num_heads=3, qkv_bias=True, qk_norm=True)
    x = tref.randn(gen, (2, 13, 48), requires_grad=True)
    out = layer(x)
    b, n, c = x.shape
    q, k, v = layer.qkv(x).reshape(b, n, 3, 3, 16).permute(2, 0, 3, 1, 4)
    q, k = layer.q_norm(q), layer.k_norm(k)
    expected = layer.proj(tref.attention_bhsd(q, k, v).transpose(1, 2).reshape(b, n, c))
    tref.assert_close(out, expected, 2e-5, 2e-5, "out")
    out.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in layer.parameters())


def test_cross_attention_layer(gen):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    layer = fvt.CrossAttention(32, context_dim=24, num_heads=4)
    x, context = tref.randn(gen, (2, 20, 32)), tref.randn(gen, (2, 7, 24))
    out = layer(x, context)
    q = layer.to_q(x).unflatten(-1, (4, 8))
    k, v = layer.to_kv(context).unflatten(-1, (2, 4, 8)).unbind(-3)
    expected = layer.proj(tref.attention_bshd(q, k, v).flatten(-2))
    tref.assert_close(out, expected, 2e-5, 2e-5, "out")


def _fwd_args(gen, varlen=False):
    if varlen:
        cu = torch.tensor([0, 4, 9], dtype=torch.int32)
        q, k, v = (tref.randn(gen, (9, 4, 16), requires_grad=True) for _ in range(3))
        return (q, k, v, cu, cu, 5, 5, 0.25, True)
    q = tref.randn(gen, (2, 4, 7, 16), requires_grad=True).transpose(1, 2)
    k = tref.randn(gen, (2, 2, 9, 16), requires_grad=True).transpose(1, 2)
    v = tref.randn(gen, (2, 2, 9, 16), requires_grad=True).transpose(1, 2)
    return (q, k, v, None, None, 0, 0, 0.0, False)


@pytest.mark.parametrize("varlen", [False, True])
def test_opcheck_fwd(gen, varlen):
    torch.library.opcheck(torch.ops.flashvision.fwd.default, _fwd_args(gen, varlen))


@pytest.mark.parametrize("varlen", [False, True])
def test_opcheck_bwd(gen, varlen):
    args = _fwd_args(gen, varlen)
    with torch.no_grad():
        out, lse = torch.ops.flashvision.fwd(*args)
    q, k, v, cu_q, cu_k, max_q, max_k, scale, causal = (
        a.detach() if isinstance(a, torch.Tensor) else a for a in args)
    dout = tref.randn(gen, out.shape)
    torch.library.opcheck(torch.ops.flashvision.bwd.default,
                          (dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale, causal,
                           False))


@pytest.mark.slow
def test_torch_compile_fullgraph_forward_and_backward(gen):
    torch._dynamo.reset()
    layer = fvt.SelfAttention(32, num_heads=2)
    x = tref.randn(gen, (2, 10, 32), requires_grad=True)
    compiled = torch.compile(layer, fullgraph=True)
    out = compiled(x)
    expected = layer(x)
    tref.assert_close(out, expected, 1e-5, 1e-5, "out")
    (grad_compiled,) = torch.autograd.grad(out.sum(), x)
    (grad_eager,) = torch.autograd.grad(expected.sum(), x)
    tref.assert_close(grad_compiled, grad_eager, 1e-5, 1e-5, "dx")


@pytest.mark.slow
def test_torch_compile_fullgraph_sdpa_dynamic_shapes(gen):
    torch._dynamo.reset()
    sdpa = torch.compile(fvt.scaled_dot_product_attention, fullgraph=True, dynamic=True)
    for n in (5, 12):
        q, k, v = _sdpa_inputs(gen, (1, 2, 2, n, n, 16), torch.float32)
        tref.assert_close(sdpa(q, k, v, is_causal=True),
                          tref.attention_bhsd(q, k, v, causal=True), 2e-5, 2e-5, "out")


def test_broadcast_grad_output(gen):
    """out.sum().backward() hands the op an expanded dout with all strides 0."""
    q, k, v = (tref.randn(gen, (1, 6, 2, 8), requires_grad=True) for _ in range(3))
    grads = torch.autograd.grad(fvt.flash_attn_func(q, k, v).sum(), (q, k, v))
    dense = torch.autograd.grad(fvt.flash_attn_func(q, k, v), (q, k, v), torch.ones(1, 6, 2, 8))
    for name, got, want in zip(("dq", "dk", "dv"), grads, dense):
        tref.assert_close(got, want, 0, 0, name)


def test_strided_last_dimension_is_copied_not_refused(gen):
    q, k, v = (tref.randn(gen, (1, 2, 6, 32)) for _ in range(3))
    out = fvt.scaled_dot_product_attention(q[..., ::2], k[..., ::2], v[..., ::2])
    expected = tref.attention_bhsd(q[..., ::2], k[..., ::2], v[..., ::2])
    tref.assert_close(out, expected, 2e-5, 2e-5, "out")


def _three(gen, shape=(1, 2, 4, 8)):
    return tuple(tref.randn(gen, shape) for _ in range(3))


def test_sdpa_attn_mask_is_not_supported(gen):
    q, k, v = _three(gen)
    with pytest.raises(NotImplementedError, match=r"^attn_mask"):
        fvt.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 4, dtype=torch.bool))


def test_sdpa_dropout_is_not_supported(gen):
    with pytest.raises(NotImplementedError, match=r"^dropout_p is 0.1"):
        fvt.scaled_dot_product_attention(*_three(gen), dropout_p=0.1)


def test_sdpa_causal_lengths(gen):
    q = tref.randn(gen, (1, 2, 3, 8))
    k = tref.randn(gen, (1, 2, 5, 8))
    with pytest.raises(NotImplementedError, match=r"is_causal=True with query length 3 != key"):
        fvt.scaled_dot_product_attention(q, k, k, is_causal=True)


def test_sdpa_gqa_needs_enable_gqa(gen):
    q = tref.randn(gen, (1, 4, 3, 8))
    k = tref.randn(gen, (1, 2, 3, 8))
    with pytest.raises(ValueError, match=r"key has 2 heads but query has 4.*enable_gqa"):
        fvt.scaled_dot_product_attention(q, k, k)
    k3 = tref.randn(gen, (1, 3, 3, 8))
    with pytest.raises(ValueError, match=r"key has 3 heads and query 4"):
        fvt.scaled_dot_product_attention(q, k3, k3, enable_gqa=True)


def test_sdpa_rank(gen):
    with pytest.raises(ValueError, match=r"^query has rank 2"):
        fvt.scaled_dot_product_attention(*_three(gen, (4, 8)))


def test_non_tensor_argument(gen):
    q, k, v = _three(gen)
    with pytest.raises(TypeError, match=r"^value must be a torch.Tensor, got numpy.ndarray"):
        fvt.scaled_dot_product_attention(q, k, v.numpy())


def test_mixed_frameworks(gen):
    q, k, v = _three(gen)
    with pytest.raises(TypeError, match=r"^k is a numpy.ndarray but q is a torch.Tensor"):
        flashvision.attention(q, k.numpy(), v)


def test_softmax_scale_is_named(gen):
    q, k, v = (x.transpose(1, 2) for x in _three(gen))
    with pytest.raises(ValueError, match=r"^softmax_scale is 0.0"):
        fvt.flash_attn_func(q, k, v, softmax_scale=0.0)


def test_varlen_cu_seqlens_dtype(gen):
    q = tref.randn(gen, (6, 2, 8))
    cu = torch.tensor([0, 6])
    with pytest.raises(ValueError, match=r"cu_seqlens_q.dtype is int64"):
        fvt.flash_attn_varlen_func(q, q, q, cu, cu.int(), 6, 6)


def test_library_errors_surface_as_value_errors(gen):
    q = tref.randn(gen, (1, 4, 2, 8))
    k = tref.randn(gen, (1, 4, 2, 16))
    with pytest.raises(flashvision.Error, match=r"k.shape\[3\] \(head dim\) is 16 but q has 8"):
        fvt.flash_attn_func(q, k, k)
    with pytest.raises(ValueError, match=r"v.dtype is bf16 but q has f32"):
        fvt.flash_attn_func(q, q, q.bfloat16())
