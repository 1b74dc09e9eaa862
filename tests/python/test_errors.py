"""Bad inputs raise TypeError (wrong Python types) or ValueError (flashvision.Error, from the
library's validation) with a message that names the argument."""

import numpy as np
import pytest

import flashvision


def _qkv(shape=(1, 4, 2, 8), dtype=np.float32):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(3))


def test_error_is_a_value_error():
    assert issubclass(flashvision.Error, ValueError)


@pytest.mark.parametrize("position, name", [(0, "q"), (1, "k"), (2, "v")])
def test_non_array_is_a_type_error_naming_the_argument(position, name):
    args = list(_qkv())
    args[position] = args[position].tolist()
    expected = rf"^{name} must be a numpy.ndarray or torch.Tensor, got list"
    with pytest.raises(TypeError, match=expected):
        flashvision.attention(*args)


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        ({"scale": 0.0}, ValueError, r"^scale is 0.0"),
        ({"scale": float("nan")}, ValueError, r"^scale is nan"),
        ({"scale": "0.1"}, TypeError, r"^scale must be a float or None, got str"),
        ({"causal": 1}, TypeError, r"^causal must be a bool, got int"),
        ({"layout": "bnhd"}, ValueError, r"^layout is 'bnhd'"),
        ({"return_lse": None}, TypeError, r"^return_lse must be a bool"),
    ],
)
def test_bad_options(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        flashvision.attention(*_qkv(), **kwargs)


def test_float64_is_rejected_naming_the_dtype():
    with pytest.raises(ValueError, match=r"q.dtype is float64; expected float32, float16"):
        flashvision.attention(*_qkv(dtype=np.float64))


def test_head_dim_mismatch_names_k():
    q, k, v = _qkv()
    with pytest.raises(flashvision.Error, match=r"k.shape\[3\] \(head dim\) is 4 but q has 8"):
        flashvision.attention(q, k[..., :4].copy(), v)


def test_dtype_mismatch_names_v():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"v.dtype is f16 but q has f32"):
        flashvision.attention(q, k, v.astype(np.float16))


def test_rank_is_checked_before_allocation():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"^q has rank 3 .*expected 4"):
        flashvision.attention(q[0], k[0], v[0])


def test_strided_last_dimension_names_q():
    q, k, v = _qkv((1, 4, 2, 16))
    with pytest.raises(ValueError, match=r"q.stride\[3\] is 2, expected 1"):
        flashvision.attention(q[..., ::2], k[..., ::2].copy(), v[..., ::2].copy())


def test_gqa_heads_must_divide():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 4, 3, 8)).astype(np.float32)
    k = rng.standard_normal((1, 4, 2, 8)).astype(np.float32)
    with pytest.raises(ValueError, match=r"k.shape\[2\] \(kv heads\) is 2"):
        flashvision.attention(q, k, k)


def _packed(total=6):
    rng = np.random.default_rng(2)
    return tuple(rng.standard_normal((total, 2, 8)).astype(np.float32) for _ in range(3))


def test_varlen_cu_seqlens_must_be_int32():
    q, k, v = _packed()
    cu = np.array([0, 2, 6], dtype=np.int64)
    with pytest.raises(ValueError, match=r"cu_seqlens_q.dtype is int64; expected"):
        flashvision.attention_varlen(q, k, v, cu, cu.astype(np.int32))


def test_varlen_cu_seqlens_must_be_an_array():
    q, k, v = _packed()
    with pytest.raises(TypeError, match=r"^cu_seqlens_k must be a numpy.ndarray"):
        flashvision.attention_varlen(q, k, v, np.array([0, 6], np.int32), [0, 6])


def test_varlen_cu_seqlens_must_end_at_total():
    q, k, v = _packed()
    cu = np.array([0, 2, 5], dtype=np.int32)
    expected = r"cu_seqlens_q\[2\] is 5 but q.shape\[0\] \(total_q\) is 6"
    with pytest.raises(ValueError, match=expected):
        flashvision.attention_varlen(q, k, v, cu, np.array([0, 2, 6], np.int32))


def test_varlen_max_seqlen_type():
    q, k, v = _packed()
    cu = np.array([0, 6], dtype=np.int32)
    with pytest.raises(TypeError, match=r"^max_seqlen_q must be an int or None, got float"):
        flashvision.attention_varlen(q, k, v, cu, cu, 6.0, 6)


def test_backward_needs_matching_lse():
    q, k, v = _qkv()
    out, lse = flashvision.attention(q, k, v, return_lse=True)
    with pytest.raises(ValueError, match=r"lse.shape\[2\] \(seqlen_q\) is 3"):
        flashvision.attention_backward(out, q, k, v, out, lse[..., :3].copy())


def test_backward_lse_must_be_float32():
    q, k, v = _qkv()
    out, lse = flashvision.attention(q, k, v, return_lse=True)
    with pytest.raises(ValueError, match=r"lse.dtype is f16"):
        flashvision.attention_backward(out, q, k, v, out, lse.astype(np.float16))


def test_cuda_backend_on_cpu_arrays():
    q, k, v = _qkv()
    out = np.empty_like(q)
    with pytest.raises(ValueError, match=r"backend is cuda-sm80 but the tensors are on cpu"):
        flashvision._C.forward(q, k, v, out, backend="cuda-sm80")


def test_unknown_backend_name():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"backend is 'gpu'; expected automatic"):
        flashvision._C.forward(q, k, v, np.empty_like(q), backend="gpu")


def test_read_only_output_is_refused():
    q, k, v = _qkv()
    out = np.empty_like(q)
    out.flags.writeable = False
    with pytest.raises(TypeError):
        flashvision._C.forward(q, k, v, out)
