"""The numpy path (CPU) against the float64 reference: layouts, GQA, causal, lse, varlen,
backward. Outputs start as NaN (conftest.poison_outputs); inputs are fresh per test."""

import numpy as np
import pytest

import flashvision
import fv_reference as ref

DTYPES = ["float32", "float16"]

# (B, Nq, Nk, H, Hkv, D): odd lengths, Nq > Nk and Nq < Nk (causal rows with no key), GQA, MQA.
SHAPES = [
    (1, 1, 1, 1, 1, 8),
    (2, 7, 13, 4, 4, 16),
    (1, 33, 17, 2, 1, 32),
    (2, 64, 64, 6, 2, 64),
    (1, 113, 203, 3, 3, 40),
    (1, 150, 97, 2, 2, 80),
]


def _dense_inputs(rng, shape, dtype, layout="bshd"):
    b, nq, nk, h, hkv, d = shape
    q = ref.random_inputs(rng, (b, nq, h, d), dtype)
    k = ref.random_inputs(rng, (b, nk, hkv, d), dtype)
    v = ref.random_inputs(rng, (b, nk, hkv, d), dtype)
    if layout == "bhsd":
        q, k, v = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in (q, k, v))
    return q, k, v


def _bshd(x, layout):
    return x if layout == "bshd" else x.transpose(0, 2, 1, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_forward_matches_reference(rng, dtype, shape, causal, layout):
    q, k, v = _dense_inputs(rng, shape, dtype, layout)
    out, lse = flashvision.attention(q, k, v, causal=causal, layout=layout, return_lse=True)
    assert out.shape == q.shape and out.dtype == q.dtype
    assert lse.dtype == np.float32 and lse.shape == (shape[0], shape[3], shape[1])
    expected, expected_lse = ref.forward(*(_bshd(x, layout) for x in (q, k, v)), causal=causal)
    ref.assert_close(_bshd(out, layout), expected, dtype, "out")
    ref.assert_close(lse, expected_lse, "float32", "lse", scale_tol=10)


def test_bhsd_output_is_contiguous_in_bhsd(rng):
    q, k, v = _dense_inputs(rng, (2, 9, 9, 3, 3, 16), "float32", "bhsd")
    out = flashvision.attention(q, k, v, layout="bhsd")
    assert out.shape == q.shape and out.flags.c_contiguous


@pytest.mark.parametrize("scale", [0.05, -0.3, 2.0])
def test_explicit_scale(rng, scale):
    q, k, v = _dense_inputs(rng, (1, 11, 19, 2, 2, 24), "float32")
    out = flashvision.attention(q, k, v, scale=scale)
    ref.assert_close(out, ref.forward(q, k, v, scale=scale)[0], "float32", "out")


def test_strided_views_of_a_fused_qkv(rng):
    """q, k, v as slices of one [B, N, 3, H, D] array: strided, no copy needed."""
    qkv = ref.random_inputs(rng, (2, 21, 3, 4, 16), "float32")
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    out = flashvision.attention(q, k, v)
    ref.assert_close(out, ref.forward(q, k, v)[0], "float32", "out")


def test_read_only_inputs(rng):
    q, k, v = _dense_inputs(rng, (1, 5, 6, 2, 2, 8), "float32")
    for x in (q, k, v):
        x.flags.writeable = False
    out = flashvision.attention(q, k, v)
    ref.assert_close(out, ref.forward(q, k, v)[0], "float32", "out")


def _varlen_case(rng, dtype, q_lens, k_lens, heads=4, heads_kv=2, dim=32):
    cu_q = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(k_lens)]).astype(np.int32)
    q = ref.random_inputs(rng, (int(cu_q[-1]), heads, dim), dtype)
    k = ref.random_inputs(rng, (int(cu_k[-1]), heads_kv, dim), dtype)
    v = ref.random_inputs(rng, (int(cu_k[-1]), heads_kv, dim), dtype)
    return q, k, v, cu_q, cu_k


VARLEN_LENGTHS = [
    ([5], [5]),
    ([3, 17, 1, 40], [3, 17, 1, 40]),
    ([9, 0, 30], [12, 5, 7]),
    ([20, 4], [3, 25]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lengths", VARLEN_LENGTHS, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_forward(rng, dtype, lengths, causal):
    q, k, v, cu_q, cu_k = _varlen_case(rng, dtype, *lengths)
    out, lse = flashvision.attention_varlen(q, k, v, cu_q, cu_k, causal=causal, return_lse=True)
    expected, expected_lse = ref.forward_varlen(q, k, v, cu_q, cu_k, causal=causal)
    ref.assert_close(out, expected, dtype, "out")
    ref.assert_close(lse, expected_lse, "float32", "lse", scale_tol=10)


def test_varlen_with_max_seqlen(rng):
    q, k, v, cu_q, cu_k = _varlen_case(rng, "float32", [4, 9], [6, 2])
    out = flashvision.attention_varlen(q, k, v, cu_q, cu_k, 9, 6)
    ref.assert_close(out, ref.forward_varlen(q, k, v, cu_q, cu_k)[0], "float32", "out")


def _backward_inputs(rng, q, dtype):
    return ref.random_inputs(rng, q.shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES[:5], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_backward_matches_reference(rng, dtype, shape, causal, layout):
    q, k, v = _dense_inputs(rng, shape, dtype, layout)
    dout = _backward_inputs(rng, q, dtype)
    out, lse = flashvision.attention(q, k, v, causal=causal, layout=layout, return_lse=True)
    dq, dk, dv = flashvision.attention_backward(dout, q, k, v, out, lse, causal=causal,
                                                layout=layout)
    for g, x in ((dq, q), (dk, k), (dv, v)):
        assert g.shape == x.shape and g.dtype == x.dtype
    expected = ref.backward(*(_bshd(x, layout) for x in (dout, q, k, v)), causal=causal)
    for name, got, want in zip(("dq", "dk", "dv"), (dq, dk, dv), expected):
        ref.assert_close(_bshd(got, layout), want, dtype, name, scale_tol=5)


@pytest.mark.parametrize("lengths", VARLEN_LENGTHS, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_backward(rng, lengths, causal):
    q, k, v, cu_q, cu_k = _varlen_case(rng, "float32", *lengths)
    dout = _backward_inputs(rng, q, "float32")
    out, lse = flashvision.attention_varlen(q, k, v, cu_q, cu_k, causal=causal, return_lse=True)
    grads = flashvision.attention_varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k,
                                                  causal=causal)
    expected = ref.backward_varlen(dout, q, k, v, cu_q, cu_k, causal=causal)
    for name, got, want in zip(("dq", "dk", "dv"), grads, expected):
        ref.assert_close(got, want, "float32", name, scale_tol=5)


def test_metadata():
    assert flashvision.__version__.count(".") == 2
    assert "cpu" in flashvision.compiled_backends()
    assert flashvision.kernel_name("cpu").startswith("cpu")
    assert any(line.startswith("cpu") for line in flashvision.describe_devices())


def test_numpy_path_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, numpy as np, flashvision\n"
            "q = np.ones((1, 2, 1, 8), np.float32)\n"
            "flashvision.attention(q, q, q)\n"
            "assert 'torch' not in sys.modules, 'flashvision imported torch'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
