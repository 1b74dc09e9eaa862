"""The torch path on CUDA tensors (skipped without a GPU or without a CUDA build): forward and
gradients against float64 references, explicit streams, varlen, torch.compile."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

import flashvision  # noqa: E402
import flashvision.torch as fvt  # noqa: E402
import fv_torch_reference as tref  # noqa: E402
from fv_torch_support import cuda_module_marks  # noqa: E402

pytestmark = cuda_module_marks()

DTYPES = [torch.float16, torch.bfloat16]


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


def _inputs(gen, shape, dtype, requires_grad=False):
    b, h, hkv, nq, nk, d = shape
    make = lambda s: tref.randn(gen, s, dtype, "cuda", requires_grad)  # noqa: E731
    return make((b, h, nq, d)), make((b, hkv, nk, d)), make((b, hkv, nk, d))


SHAPES = [
    (1, 1, 1, 1, 1, 64),
    (2, 4, 4, 113, 203, 64),
    (1, 8, 2, 256, 256, 128),
    (2, 3, 3, 97, 97, 40),
    (1, 2, 1, 77, 300, 80),
    (1, 2, 2, 128, 128, 256),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, causal", [
    pytest.param(s, c, id="x".join(map(str, s)) + ("-causal" if c else ""))
    for s in SHAPES for c in (False, True) if not c or s[3] == s[4]])
def test_forward_and_gradients_as_accurate_as_torch(gen, dtype, shape, causal):
    q, k, v = _inputs(gen, shape, dtype, requires_grad=True)
    gqa = shape[1] != shape[2]
    out = fvt.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    grad_out = tref.randn(gen, out.shape, dtype, "cuda")
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        their_grads = torch.autograd.grad(theirs, (q, k, v), grad_out)
    q64, k64, v64 = (tref.float64_leaf(x) for x in (q, k, v))
    reference = tref.attention_bhsd(q64, k64, v64, causal=causal)
    expected = torch.autograd.grad(reference, (q64, k64, v64), grad_out.double())
    tref.assert_as_accurate_as_torch(out, theirs, reference, "out")
    for name, a, b, e in zip(("dq", "dk", "dv"), grads, their_grads, expected):
        tref.assert_as_accurate_as_torch(a, b, e, name)


def test_runs_on_the_current_stream(gen):
    q, k, v = _inputs(gen, (2, 4, 4, 512, 512, 64), torch.bfloat16)
    expected = fvt.scaled_dot_product_attention(q, k, v)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = fvt.scaled_dot_product_attention(q, k, v)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    tref.assert_close(out, expected, 0, 0, "out on a side stream")


def test_varlen(gen):
    q_lens, k_lens = [17, 0, 130, 1], [33, 5, 130, 64]
    cu_q = torch.tensor([0, *np.cumsum(q_lens)], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, *np.cumsum(k_lens)], dtype=torch.int32, device="cuda")
    make = lambda n, h: tref.randn(gen, (n, h, 64), torch.bfloat16, "cuda", True)  # noqa: E731
    q, k, v = make(sum(q_lens), 4), make(sum(k_lens), 2), make(sum(k_lens), 2)
    out = fvt.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(q_lens), max(k_lens), causal=True)
    out.sum().backward()
    for b in range(len(q_lens)):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if q_lens[b] == 0:
            continue
        expected = tref.attention_bshd(*(x.double()[None, s] for x, s in ((q, qs), (k, ks),
                                                                            (v, ks))),
                                       causal=True)[0]
        tref.assert_close(out[qs], expected, 2e-2, 2e-2, f"out of sequence {b}")
    assert all(torch.isfinite(x.grad).all() for x in (q, k, v))


def test_varlen_needs_max_seqlen_on_cuda(gen):
    q = tref.randn(gen, (8, 2, 64), torch.float16, "cuda")
    cu = torch.tensor([0, 8], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match=r"max_seqlen_q is 0"):
        flashvision.attention_varlen(q, q, q, cu, cu)


def test_mixed_devices_are_refused(gen):
    q = tref.randn(gen, (1, 8, 2, 64), torch.float16, "cuda")
    with pytest.raises(ValueError, match=r"k is on cpu but q is on cuda:0"):
        fvt.flash_attn_func(q, q.cpu(), q)


def test_torch_compile_on_cuda(gen):
    torch._dynamo.reset()
    layer = fvt.SelfAttention(256, num_heads=4, device="cuda", dtype=torch.bfloat16)
    x = tref.randn(gen, (2, 197, 256), torch.bfloat16, "cuda", requires_grad=True)
    compiled = torch.compile(layer, fullgraph=True)
    out = compiled(x)
    tref.assert_close(out, layer(x), 2e-2, 2e-2, "out")
    out.float().square().sum().backward()
    assert torch.isfinite(x.grad).all()


def test_opcheck_on_cuda(gen):
    q, k, v = (x.transpose(1, 2).requires_grad_() for x in
               _inputs(gen, (2, 4, 2, 33, 47, 64), torch.bfloat16))
    torch.library.opcheck(torch.ops.flashvision.fwd.default,
                          (q, k, v, None, None, 0, 0, 0.0, True))
