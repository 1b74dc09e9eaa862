"""The eager fast path of flashvision.torch: calls that skip the custom op's dispatch and hand the
library raw pointers, shapes and strides instead of DLPack capsules. Each case compares it with
the op path (torch.ops.flashvision.*, DLPack-free too but dispatched) and a float64 reference, on
the strided inputs where a wrong pointer or stride would show."""

import pytest

torch = pytest.importorskip("torch")

import flashvision  # noqa: E402
import flashvision.torch as fvt  # noqa: E402
import fv_torch_reference as tref  # noqa: E402
from flashvision.torch import _ops  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


def _strided_inputs(gen, kind, dtype=torch.float32, requires_grad=False):
    """q [B, N, H, D], k and v [B, Nk, Hkv, D] views with the strides of real models."""
    b, n, nk, h, hkv, d = 2, 9, 13, 4, 2, 16
    if kind == "bhsd":  # SDPA-ordered storage, seen as [B, N, H, D]
        q, k, v = (tref.randn(gen, (b, hh, nn, d), dtype).transpose(1, 2)
                   for hh, nn in ((h, n), (hkv, nk), (hkv, nk)))
    elif kind == "fused-qkv":  # unbind of one projection: all three share a buffer
        qkv = tref.randn(gen, (b, n, 3, h, d), dtype)
        q, k, v = qkv.unbind(2)
    elif kind == "sliced":  # every other token, and an offset into the storage
        q = tref.randn(gen, (b, 2 * n + 1, h, d), dtype)[:, 1::2]
        k, v = (tref.randn(gen, (b, 2 * nk, hkv, d), dtype)[:, ::2] for _ in range(2))
    else:  # "strided-d": a last dimension with stride 2, which the op copies
        q = tref.randn(gen, (b, n, h, 2 * d), dtype)[..., ::2]
        k, v = (tref.randn(gen, (b, nk, hkv, 2 * d), dtype)[..., ::2] for _ in range(2))
    if requires_grad:
        q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    return q, k, v


KINDS = ["bhsd", "fused-qkv", "sliced", "strided-d"]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_direct_forward_matches_op_and_reference(gen, kind, causal):
    q, k, v = _strided_inputs(gen, kind)
    assert _ops.can_call_directly(q, k, v)
    out, lse = _ops.forward(q, k, v, None, None, 0, 0, 0.0, causal)
    out_op, lse_op = torch.ops.flashvision.fwd(q, k, v, None, None, 0, 0, 0.0, causal)
    torch.testing.assert_close(out, out_op, rtol=0, atol=0)
    torch.testing.assert_close(lse, lse_op, rtol=0, atol=0)
    assert out.stride() == out_op.stride()
    reference = tref.attention_bshd(*(tref.float64_leaf(x) for x in (q, k, v)), causal=causal)
    tref.assert_close(out, reference, 1e-5, 1e-5, "out")
    no_lse, none = _ops.forward(q, k, v, None, None, 0, 0, 0.0, causal, need_lse=False)
    assert none is None
    torch.testing.assert_close(no_lse, out, rtol=0, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_direct_gradients_match_op(gen, kind):
    q, k, v = _strided_inputs(gen, kind, requires_grad=True)
    dout = tref.randn(gen, tuple(q.shape), q.dtype)
    out = fvt.flash_attn_func(q, k, v, causal=True)
    assert type(out.grad_fn).__name__ == "_DirectAttentionBackward"
    grads = torch.autograd.grad(out, (q, k, v), dout)
    out_op, _ = torch.ops.flashvision.fwd(q, k, v, None, None, 0, 0, 0.0, True)
    grads_op = torch.autograd.grad(out_op, (q, k, v), dout)
    torch.testing.assert_close(out, out_op, rtol=0, atol=0)
    for name, ours, theirs in zip("qkv", grads, grads_op):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0, msg=f"d{name}")


def test_direct_varlen_matches_op(gen):
    cu = torch.tensor([0, 3, 3, 11], dtype=torch.int32)
    q, k, v = (tref.randn(gen, (11, 2, 4, 8), torch.float32)[:, :, 1] for _ in range(3))
    args = (q, k, v, cu, cu, 8, 8, 0.5, True)
    for ours, theirs in zip(_ops.forward(*args), torch.ops.flashvision.fwd(*args)):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)


def test_direct_path_is_skipped_where_the_op_must_be_seen(gen):
    q, k, v = _strided_inputs(gen, "bhsd")
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Recorder():
        assert not _ops.can_call_directly(q, k, v)
        fvt.flash_attn_func(q, k, v)
    assert "flashvision.fwd.default" in seen
    meta = [x.to("meta") for x in (q, k, v)]
    assert not _ops.can_call_directly(*meta)
    assert fvt.flash_attn_func(*meta).shape == q.shape


def test_direct_double_backward_is_reported(gen):
    q, k, v = _strided_inputs(gen, "fused-qkv", requires_grad=True)
    (dq,) = torch.autograd.grad(fvt.flash_attn_func(q, k, v).sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="flashvision.bwd"):
        dq.sum().backward()


@pytest.mark.parametrize("bad, message", [
    (lambda x: x.double(), "q.dtype is float64"),
    (lambda x: x.to(torch.int32), "q.dtype"),
])
def test_direct_path_unsupported_dtype_is_named(gen, bad, message):
    q, k, v = _strided_inputs(gen, "sliced")
    with pytest.raises(flashvision.Error, match=message):
        fvt.flash_attn_func(bad(q), bad(k), bad(v))


def test_direct_path_mixed_dtypes_and_devices_are_named(gen):
    q, k, v = _strided_inputs(gen, "sliced")
    with pytest.raises(flashvision.Error, match="k.dtype"):
        fvt.flash_attn_func(q, k.half(), v)
    with pytest.raises(Exception, match="(?i)device|meta|ndarray"):
        fvt.flash_attn_func(q, k.to("meta"), v)


def test_described_tensors_are_validated():
    out = torch.empty(1, 2, 1, 8)
    desc = (out.data_ptr(), 0, -1, tuple(out.shape), out.stride())
    with pytest.raises(flashvision.Error, match="dtype code 99"):
        flashvision._C.forward_described(desc, desc, (desc[0], 99) + desc[2:], desc, None, 0.0,
                                         False, None, None, 0, 0, 0)
    with pytest.raises(flashvision.Error, match="q has rank 5"):
        flashvision._C.forward_described(desc[:3] + ((1,) * 5, (1,) * 5), desc, desc, desc, None,
                                         0.0, False, None, None, 0, 0, 0)


class _PassThrough(TorchDispatchMode):
    """A dispatch mode that changes nothing but turns off the direct path (can_call_directly),
    so that the same public call takes the op path, with its transposes around the op."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _sdpa_bhsd_inputs(gen, kind, nq, nk):
    """q [B, H, Nq, D], k and v [B, Hkv, Nk, D] that are not contiguous, leaves needing grad."""
    b, h, hkv, d = 2, 4, 2, 16
    if kind == "tokens-outer":  # a permuted view of [N, B, H, D] storage: dense, but not in order
        make = lambda hh, nn: tref.randn(gen, (nn, b, hh, d)).permute(1, 2, 0, 3)  # noqa: E731
    elif kind == "bnhd-storage":  # heads split off a projection, then transposed, as in timm
        make = lambda hh, nn: tref.randn(gen, (b, nn, hh, d)).transpose(1, 2)  # noqa: E731
    else:  # "sliced": every other token, not dense
        make = lambda hh, nn: tref.randn(gen, (b, hh, 2 * nn, d))[:, :, ::2]  # noqa: E731
    q, k, v = make(h, nq), make(hkv, nk), make(hkv, nk)
    assert not q.is_contiguous()
    return tuple(x.requires_grad_() for x in (q, k, v))


@pytest.mark.parametrize("causal, nq, nk", [(False, 9, 13), (True, 11, 11)])
@pytest.mark.parametrize("kind", ["tokens-outer", "bnhd-storage", "sliced"])
def test_direct_sdpa_bhsd_matches_op_and_math_sdpa(gen, kind, causal, nq, nk):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = _sdpa_bhsd_inputs(gen, kind, nq, nk)
    dout = tref.randn(gen, tuple(q.shape))
    sdpa = fvt.scaled_dot_product_attention
    assert _ops.can_call_directly(q, k, v)
    out = sdpa(q, k, v, is_causal=causal, enable_gqa=True)
    # No transpose (or any other view) node between the caller's tensors and the attention.
    assert type(out.grad_fn).__name__ == "_DirectAttentionBackward"
    assert all(type(edge[0]).__name__ == "AccumulateGrad" for edge in out.grad_fn.next_functions
               if edge[0] is not None)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    with _PassThrough():
        out_op = sdpa(q, k, v, is_causal=causal, enable_gqa=True)
        assert type(out_op.grad_fn).__name__ == "TransposeBackward0"
        grads_op = torch.autograd.grad(out_op, (q, k, v), dout)
    with sdpa_kernel(SDPBackend.MATH):
        out_math = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                    enable_gqa=True)
        grads_math = torch.autograd.grad(out_math, (q, k, v), dout)
    torch.testing.assert_close(out, out_op, rtol=0, atol=0)
    tref.assert_close(out, out_math, 1e-5, 1e-5, "out vs math SDPA")
    for name, ours, op, math in zip("qkv", grads, grads_op, grads_math):
        torch.testing.assert_close(ours, op, rtol=0, atol=0, msg=f"d{name}")
        tref.assert_close(ours, math, 1e-5, 1e-5, f"d{name} vs math SDPA")
    if kind != "sliced":  # a dense input's memory order carries over to its output and gradient
        assert out.stride() == q.stride() == out_op.stride()
        for x, dx, dx_op in zip((q, k, v), grads, grads_op):
            assert dx.stride() == x.stride() == dx_op.stride()
    with torch.no_grad():  # the no-autograd direct call writes the same output
        torch.testing.assert_close(sdpa(q, k, v, is_causal=causal, enable_gqa=True), out,
                                   rtol=0, atol=0)


def test_direct_sdpa_unbatched_matches_op(gen):
    q, k, v = (tref.randn(gen, (2, 5, 8), requires_grad=True) for _ in range(3))
    out = fvt.scaled_dot_product_attention(q, k, v)
    (dq,) = torch.autograd.grad(out.sum(), q)
    with _PassThrough():
        out_op = fvt.scaled_dot_product_attention(q, k, v)
        (dq_op,) = torch.autograd.grad(out_op.sum(), q)
    torch.testing.assert_close(out, out_op, rtol=0, atol=0)
    torch.testing.assert_close(dq, dq_op, rtol=0, atol=0)


def test_direct_sdpa_double_backward_is_reported(gen):
    q, k, v = _sdpa_bhsd_inputs(gen, "bnhd-storage", 5, 5)
    (dq,) = torch.autograd.grad(fvt.scaled_dot_product_attention(q, k, v, enable_gqa=True).sum(),
                                q, create_graph=True)
    with pytest.raises(RuntimeError, match="flashvision.bwd"):
        dq.sum().backward()


@pytest.mark.parametrize("bad, error, message", [
    (lambda q, k, v: (q.double(), k.double(), v.double()), flashvision.Error,
     "q.dtype is float64"),
    (lambda q, k, v: (q, k.half(), v), flashvision.Error, "k.dtype"),
    (lambda q, k, v: (q, k[..., :8], v), flashvision.Error,
     r"k.shape\[3\] \(head dim\) is 8 but q has 16"),
    (lambda q, k, v: (q, k, v[:, :, :3]), flashvision.Error, r"v.shape\[1\]"),
])
def test_direct_sdpa_errors_match_op(gen, bad, error, message):
    """The library names shapes in [B, N, H, D] order on both paths (the op sees transposes)."""
    q, k, v = bad(*(x.detach() for x in _sdpa_bhsd_inputs(gen, "tokens-outer", 5, 5)))
    with pytest.raises(error, match=message) as direct:
        fvt.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with _PassThrough(), pytest.raises(error, match=message) as op:
        fvt.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert str(direct.value) == str(op.value)
